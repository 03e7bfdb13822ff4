import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Bus, BusObserver } from '@erp/bus';
import type { Kysely, SnapshotExportOptions } from '@erp/db';
import { API_VERSION, streamOfSubject } from '@erp/contracts';
import type { BaseConfig } from './config';

/** One Prometheus registry per service, with process metrics, the build and the bus timings. */
export function createMetrics(service: string): { registry: Registry; busObserver: BusObserver } {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  // A constant 1 whose labels say what runs: joined on by dashboards, counted by version during a rollout.
  new Gauge({
    name: 'erp_build_info',
    help: 'The running build: interface version and Node.js version (always 1)',
    labelNames: ['version', 'node_version'],
    registers: [registry],
  }).set({ version: API_VERSION, node_version: process.versions.node }, 1);
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const requested = new Histogram({
    name: 'erp_bus_request_duration_seconds',
    help: 'Requests this process sent over NATS, by subject and outcome code',
    labelNames: ['subject', 'code'],
    buckets,
    registers: [registry],
  });
  const handled = new Histogram({
    name: 'erp_bus_handler_duration_seconds',
    help: 'Requests this process handled from NATS, by subject and outcome code',
    labelNames: ['subject', 'code'],
    buckets,
    registers: [registry],
  });
  const consumed = new Counter({
    name: 'erp_consumer_messages_total',
    help: 'JetStream messages settled by durable consumers, by outcome (ack, nak = retry later, term = given up)',
    labelNames: ['consumer', 'subject', 'outcome'],
    registers: [registry],
  });
  const redelivered = new Counter({
    name: 'erp_consumer_redeliveries_total',
    help: 'JetStream messages handled again after an earlier delivery failed or timed out',
    labelNames: ['consumer', 'subject'],
    registers: [registry],
  });
  return {
    registry,
    busObserver: {
      requested: (subject, code, seconds) => requested.observe({ subject, code }, seconds),
      handled: (subject, code, seconds) => handled.observe({ subject, code }, seconds),
      consumed: (consumer, subject, outcome, deliveryCount) => {
        consumed.inc({ consumer, subject, outcome });
        if (deliveryCount > 1) redelivered.inc({ consumer, subject });
      },
    },
  };
}

/** Outbox backlog gauges, read from the service's own outbox when Prometheus scrapes. */
export function registerOutboxMetrics(registry: Registry, backlog: () => Promise<{ pending: number; oldestAgeSeconds: number }>): void {
  registerSnapshotGauges(
    registry,
    {
      pending: { name: 'erp_outbox_pending_events', help: 'Events committed to the outbox and not yet published to JetStream' },
      oldestAgeSeconds: { name: 'erp_outbox_oldest_pending_age_seconds', help: 'Age of the oldest unpublished outbox event (0 when none)' },
    },
    backlog,
  );
}

/** What JetStream says of a durable consumer (its consumer info). */
export interface ConsumerState {
  /** Events not delivered yet (`num_pending`) and delivered but not settled (`num_ack_pending`). */
  pending: number;
  /** Stream sequence up to which every event was settled (`ack_floor.stream_seq`). */
  ackFloor: number;
}

/**
 * The durable consumers' lag, read from JetStream when Prometheus scrapes: the events waiting for
 * each, and how long its oldest unsettled event has waited, timed from the first scrape that saw
 * its ack floor where it is (the floor moves when the oldest event is settled; 0 when nothing
 * waits). A consumer that receives nothing at all (its loop stopped, its process stuck) settles
 * nothing and redelivers nothing; here its wait grows.
 */
export function registerConsumerMetrics(
  registry: Registry,
  read: () => Promise<Record<string, ConsumerState>>,
  now: () => number = Date.now,
): void {
  const waiting = new Map<string, { ackFloor: number; since: number }>();
  registerSnapshotGauges(
    registry,
    {
      pending: {
        name: 'erp_consumer_pending_messages',
        help: 'Events waiting for a durable consumer: not delivered yet, or delivered and not settled (JetStream consumer info)',
        label: 'consumer',
      },
      oldestAgeSeconds: {
        name: 'erp_consumer_oldest_pending_age_seconds',
        help: "Seconds the consumer's oldest unsettled event has waited, from the first scrape that saw its ack floor there (0 when none)",
        label: 'consumer',
      },
    },
    async () => {
      const states = await read();
      const at = now();
      const pending: Record<string, number> = {};
      const oldestAgeSeconds: Record<string, number> = {};
      for (const [consumer, state] of Object.entries(states)) {
        pending[consumer] = state.pending;
        let seen = waiting.get(consumer);
        if (state.pending === 0) waiting.delete(consumer);
        else if (seen?.ackFloor !== state.ackFloor) waiting.set(consumer, (seen = { ackFloor: state.ackFloor, since: at }));
        oldestAgeSeconds[consumer] = state.pending === 0 || !seen ? 0 : (at - seen.since) / 1000;
      }
      return { pending, oldestAgeSeconds };
    },
  );
}

/**
 * Reads the state of the durable consumers `durables` (durable name → the event it reads, on the
 * stream that carries it; each service may ask JetStream about its own). A consumer JetStream does
 * not know is left out.
 */
export function jetStreamConsumerStates(
  bus: Pick<Bus, 'nc' | 'options'>,
  durables: Readonly<Record<string, string>>,
): () => Promise<Record<string, ConsumerState>> {
  return async () => {
    const states: Record<string, ConsumerState> = {};
    for (const [durable, event] of Object.entries(durables)) {
      const stream = streamOfSubject(bus.options.prefix, event);
      const info = (await bus.nc.request(`$JS.API.CONSUMER.INFO.${stream}.${durable}`, '', { timeout: 2_000 })).json<{
        error?: unknown;
        num_pending?: number;
        num_ack_pending?: number;
        ack_floor?: { stream_seq?: number };
      }>();
      if (info.error) continue;
      states[durable] = { pending: (info.num_pending ?? 0) + (info.num_ack_pending ?? 0), ackFloor: info.ack_floor?.stream_seq ?? 0 };
    }
    return states;
  };
}

/** A gauge of `registerSnapshotGauges`: plain, or with one label whose values the reading keys. */
export interface SnapshotGauge {
  name: string;
  help: string;
  label?: string;
}

/** One reading of snapshot gauges: a number per plain gauge, a number per label value for a labelled one. */
export type SnapshotReading<K extends string> = Record<K, number | Record<string, number>>;

/**
 * Gauges of state the service keeps in its database (a backlog, open work), read when Prometheus
 * scrapes rather than on a timer, so an idle service costs nothing. Every gauge of the set shares
 * one read per scrape, so they describe the same moment; a failed read keeps the last values
 * (the database being down has its own signals: readiness, the pool's waiting clients).
 */
export function registerSnapshotGauges<K extends string>(
  registry: Registry,
  gauges: Record<K, SnapshotGauge>,
  read: () => Promise<SnapshotReading<K>>,
): void {
  let last: Partial<SnapshotReading<K>> = {};
  let reading: Promise<void> | undefined;
  const refresh = () =>
    (reading ??= read()
      .then(
        (values) => void (last = values),
        () => undefined,
      )
      .finally(() => (reading = undefined)));
  for (const key of Object.keys(gauges) as K[]) {
    const { name, help, label } = gauges[key];
    new Gauge({
      name,
      help,
      labelNames: label ? [label] : [],
      registers: [registry],
      async collect() {
        await refresh();
        const value = last[key] ?? 0;
        if (typeof value === 'number') return void this.set(value);
        this.reset();
        for (const [labelValue, count] of Object.entries(value)) this.set({ [label ?? 'value']: labelValue }, count);
      },
    });
  }
}

/**
 * A counter of outcomes, every outcome present at 0 from the start: `increase()` sees the first
 * one (a series that appears with 1 has no earlier sample to grow from).
 */
export function registerOutcomeCounter<O extends string>(
  registry: Registry,
  metric: { name: string; help: string; label: string; outcomes: readonly O[] },
): (outcome: O) => void {
  const counter = new Counter({ name: metric.name, help: metric.help, labelNames: [metric.label], registers: [registry] });
  for (const outcome of metric.outcomes) counter.inc({ [metric.label]: outcome }, 0);
  return (outcome) => counter.inc({ [metric.label]: outcome });
}

/** A counter without labels, present at 0 from the start; the function returned adds `n` (1 unless given). */
export function registerCounter(registry: Registry, metric: { name: string; help: string }): (n?: number) => void {
  const counter = new Counter({ name: metric.name, help: metric.help, registers: [registry] });
  counter.inc(0);
  return (n = 1) => counter.inc(n);
}

/**
 * The read-only endpoint (`DATABASE_URL_READ`) of the service whose metrics are `registry`, as the
 * runtime opened it at start: its exports read their snapshots there (exportPacing).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const exportReplicas = new WeakMap<Registry, Kysely<any>>();

/** Called by the runtime when the service has a read-only endpoint: its exports are read there. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function registerExportReplica(registry: Registry, replica: Kysely<any>): void {
  exportReplicas.set(registry, replica);
}

/**
 * How a service that owns data writes export files: readers from `EXPORT_READERS`, yielding to
 * its requests as `EXPORT_YIELD_TO_REQUESTS` says, the pauses counted in
 * `erp_export_paused_seconds_total` (an export slowed by the service's load shows there); with a
 * read-only endpoint, read from a replica's snapshot when it has an exact one, each export counted
 * by where it was read in `erp_export_snapshots_total{source}`.
 */
export function exportPacing(
  registry: Registry,
  config: Pick<BaseConfig, 'EXPORT_READERS' | 'EXPORT_YIELD_TO_REQUESTS'>,
): SnapshotExportOptions {
  const paused = registerCounter(registry, {
    name: 'erp_export_paused_seconds_total',
    help: 'Seconds export readers paused to leave the service to its requests',
  });
  const sources = registerOutcomeCounter(registry, {
    name: 'erp_export_snapshots_total',
    help: 'Exports written, by where their snapshot was read (replica: DATABASE_URL_READ; primary: DATABASE_URL)',
    label: 'source',
    outcomes: ['replica', 'primary'] as const,
  });
  const replica = exportReplicas.get(registry);
  return {
    readers: config.EXPORT_READERS,
    yieldToRequests: config.EXPORT_YIELD_TO_REQUESTS,
    onPause: (ms) => paused(ms / 1000),
    onSource: sources,
    ...(replica ? { replica } : {}),
  };
}

/** What a connection pool reports about itself (pg.Pool's counts). */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * The database pool's use: connections in use and idle, queries waiting for a connection, and the
 * pool's size. Waiting queries with every connection in use is saturation: requests slow down
 * before they fail, so it is alerted on before timeouts show.
 */
export function registerPoolMetrics(registry: Registry, pool: PoolCounts, max: number): void {
  new Gauge({
    name: 'erp_db_pool_connections',
    help: 'Connections of the database pool, by state (in_use, idle)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'idle' }, pool.idleCount);
    },
  });
  new Gauge({
    name: 'erp_db_pool_waiting_clients',
    help: 'Queries waiting for a connection of the database pool',
    registers: [registry],
    collect() {
      this.set(pool.waitingCount);
    },
  });
  new Gauge({
    name: 'erp_db_pool_max_connections',
    help: 'Size of the database pool (DB_POOL_MAX)',
    registers: [registry],
  }).set(max);
}
