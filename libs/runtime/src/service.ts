import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, type Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import { Bus, OutboxRelay, checkEventStream, outboxBacklog, provisionJetStream } from '@erp/bus';
import { createPool, dbOverPool, migrateSchema, type Migrations } from '@erp/db';
import { BUS_IDENTITIES, type BusIdentity, type ServiceName } from '@erp/contracts';
import { natsConnection, type BaseConfig } from './config';
import { createLogger, type AppLogger } from './logger';
import {
  createMetrics,
  jetStreamConsumerStates,
  registerConsumerMetrics,
  registerExportReplica,
  registerOutboxMetrics,
  registerPoolMetrics,
} from './metrics';

/** A readiness check: resolves with a short status, throws when not ready. */
export type ReadinessCheck = () => Promise<string>;

/**
 * What a service's `setup` is given. `DB` is the service's table interfaces (its `db/tables.ts`),
 * so `db` is typed as the service's own schema without a cast; code that handles any service
 * (the test stack, the runtime's own tests) leaves it out.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ServiceContext<C extends BaseConfig, DB = any> {
  name: ServiceName;
  config: Readonly<C>;
  logger: AppLogger;
  /** Bound to the service's own schema: unqualified table names are that schema's tables. */
  db: Kysely<DB>;
  bus: Bus;
  /**
   * The relay of the schema's outbox, started by the runtime before setup and stopped with the bus:
   * `nudge()` after a commit that wrote outbox rows publishes them at once instead of at its next poll.
   */
  outbox: OutboxRelay;
  metrics: Registry;
  /** Registers a stop step. Steps run in reverse order of registration, under the deadline. */
  onShutdown(name: string, step: () => Promise<void>): void;
  /** A check that must pass for /readyz (`required`), or that only reports a degraded state. */
  addReadinessCheck(name: string, check: ReadinessCheck, options?: { required?: boolean }): void;
}

/** A service: its config, the schema it owns (whose tables are `DB`) and how it registers its handlers. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ServiceSpec<C extends BaseConfig, DB = any> {
  name: ServiceName;
  /** The Postgres schema this service owns; its migrations run at start when `migrateOnStart`. */
  schema: string;
  migrations: Migrations;
  config: Readonly<C>;
  /** Registers handlers, consumers and servers. Runs after db and NATS are up. */
  setup(ctx: ServiceContext<C, DB>): Promise<void>;
}

export interface StartOptions {
  /** Run the schema's migrations before serving (tests and `npm start`; production uses the migrate Job). */
  migrateOnStart?: boolean;
  logger?: AppLogger;
  /** Last step before the process exits (flushing telemetry). */
  beforeExit?: () => Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface RunningService<C extends BaseConfig, DB = any> {
  ctx: ServiceContext<C, DB>;
  /** Port of the ops server (/healthz, /readyz, /metrics). */
  opsPort: number;
  /** Stops in reverse start order under the configured deadline. Resolves false when the deadline hit. */
  stop(): Promise<boolean>;
}

/**
 * Starts a service in the fixed order: db → NATS → event stream → handlers (setup) → ops server,
 * and prepares the reverse stop order. Telemetry is started earlier, by the entry point's first import.
 */
export async function startService<C extends BaseConfig, DB>(
  spec: ServiceSpec<C, DB>,
  options: StartOptions = {},
): Promise<RunningService<C, DB>> {
  const { config } = spec;
  const logger = options.logger ?? createLogger(spec.name, config.LOG_LEVEL);
  const steps: Array<{ name: string; step: () => Promise<void> }> = [];
  const onShutdown = (name: string, step: () => Promise<void>) => void steps.push({ name, step });
  const checks: Array<{ name: string; check: ReadinessCheck; required: boolean }> = [];
  let stopping = false;

  const pool = createPool({
    connectionString: config.DATABASE_URL,
    max: config.DB_POOL_MAX,
    applicationName: spec.name,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
  });
  const rootDb = dbOverPool<unknown>(pool);
  onShutdown('db', () => rootDb.destroy());
  try {
    await sql`select 1`.execute(rootDb);
    if (options.migrateOnStart) await migrateSchema(rootDb, spec.schema, spec.migrations);
  } catch (err) {
    await rootDb.destroy();
    throw err;
  }
  // The tables of the schema are the ones its migrations made, which the spec's `DB` describes.
  const db = rootDb.withSchema(spec.schema) as Kysely<DB>;

  const { registry, busObserver } = createMetrics(spec.name);
  // A read-only endpoint (a replica) for the reads that may lag: its own pool, as large as the
  // export readers need, and a readiness check that only reports (the primary serves when it is down).
  if (config.DATABASE_URL_READ) {
    const readPool = createPool({
      connectionString: config.DATABASE_URL_READ,
      max: config.EXPORT_READERS + 1,
      applicationName: `${spec.name}-read`,
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    });
    const readDb = dbOverPool<unknown>(readPool);
    onShutdown('db-read', () => readDb.destroy());
    registerExportReplica(registry, readDb.withSchema(spec.schema));
    checks.push({ name: 'postgres-read', required: false, check: async () => (await sql`select 1`.execute(readDb), 'ok') });
  }
  // Every service schema has an outbox (createOutboxTables is part of each first migration).
  // Collected in registration order: the pool is read before the scrape's own queries take a connection.
  registerPoolMetrics(registry, pool, config.DB_POOL_MAX);
  registerOutboxMetrics(registry, () => outboxBacklog(db));
  const bus = await Bus.connect({
    ...natsConnection(config),
    prefix: config.SUBJECT_PREFIX,
    name: spec.name,
    logger,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    observer: busObserver,
    validateReplies: config.VALIDATE_REPLIES === undefined ? config.NODE_ENV !== 'production' : config.VALIDATE_REPLIES === 'true',
  });
  onShutdown('nats', () => bus.drain());
  // The lag of the durable consumers the service reads (BUS_IDENTITIES), as JetStream counts it.
  const durables = Object.keys((BUS_IDENTITIES as Readonly<Record<string, BusIdentity>>)[spec.name]?.consumers ?? {});
  if (durables.length > 0) registerConsumerMetrics(registry, jetStreamConsumerStates(bus, durables));
  // Migrating at start is for local runs and tests, on a NATS without identities: the service
  // then also does the operator's part. In production the migration step did it.
  if (options.migrateOnStart) await provisionJetStream(bus, [spec.name]);
  else await checkEventStream(bus);

  checks.push({ name: 'postgres', required: true, check: async () => (await sql`select 1`.execute(rootDb), 'ok') });
  checks.push({
    name: 'nats',
    required: true,
    check: async () => {
      if (!bus.isConnected()) throw new Error('disconnected');
      return 'ok';
    },
  });

  // Every service schema has an outbox (createOutboxTables is part of each first migration).
  const outbox = new OutboxRelay({ db, bus });
  outbox.start();

  const ctx: ServiceContext<C, DB> = {
    name: spec.name,
    config,
    logger,
    db,
    bus,
    outbox,
    metrics: registry,
    onShutdown,
    addReadinessCheck: (name, check, opts) => void checks.push({ name, check, required: opts?.required ?? true }),
  };
  await spec.setup(ctx);
  // The subscriptions setup made are known to the server once this round trip returns: a request
  // sent the moment the service says it started (or ready) finds a responder, never "no responders".
  await bus.nc.flush();

  const ops = http.createServer((req, res) => {
    void handleOps(req, res).catch(() => {
      res.statusCode = 500;
      res.end();
    });
  });
  const handleOps = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/metrics') {
      res.setHeader('Content-Type', registry.contentType);
      return res.end(await registry.metrics());
    }
    if (path === '/readyz') {
      const results: Record<string, string> = {};
      let ready = !stopping;
      await Promise.all(
        checks.map(async ({ name, check, required }) => {
          try {
            results[name] = await withTimeout(check(), 2_000);
          } catch (err) {
            results[name] = `${required ? 'down' : 'degraded'}: ${(err as Error).message}`;
            if (required) ready = false;
          }
        }),
      );
      if (stopping) results.shutdown = 'in progress';
      return json(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', checks: results });
    }
    return json(res, 404, { status: 'not found' });
  };
  await new Promise<void>((resolve) => ops.listen(config.OPS_PORT, config.BIND_ADDRESS, resolve));
  onShutdown('ops-server', () => new Promise((resolve) => ops.close(() => resolve())));
  const opsPort = (ops.address() as AddressInfo).port;
  logger.info({ opsPort, schema: spec.schema, prefix: config.SUBJECT_PREFIX }, 'service started');

  let stopped: Promise<boolean> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      logger.info({}, 'stopping');
      const run = (async () => {
        // The ops server answers /readyz 503 until the end, so it closes last of the servers:
        // stop steps run newest first, except that it is moved to the very end.
        const ordered = [...steps].reverse().sort((a, b) => Number(a.name === 'ops-server') - Number(b.name === 'ops-server'));
        for (const { name, step } of ordered) {
          try {
            await step();
          } catch (err) {
            logger.warn({ err, step: name }, 'stop step failed');
          }
        }
      })();
      const inTime = await Promise.race([run.then(() => true), delay(config.SHUTDOWN_TIMEOUT_MS).then(() => false)]);
      logger.info({ inTime }, 'stopped');
      return inTime;
    })());

  return { ctx, opsPort, stop };
}

/**
 * Entry-point helper: starts the service, stops it on SIGTERM/SIGINT and exits with 128 + signal
 * (or 1 when the deadline was hit or start failed).
 */
export function runService<C extends BaseConfig, DB>(spec: ServiceSpec<C, DB>, options: StartOptions = {}): void {
  const logger = options.logger ?? createLogger(spec.name, spec.config.LOG_LEVEL);
  startService(spec, { ...options, logger }).then(
    (service) => {
      const onSignal = (signal: NodeJS.Signals, code: number) => {
        logger.info({ signal }, 'signal received');
        void service.stop().then(async (inTime) => {
          await options.beforeExit?.();
          process.exit(inTime ? 128 + code : 1);
        });
      };
      process.once('SIGTERM', () => onSignal('SIGTERM', 15));
      process.once('SIGINT', () => onSignal('SIGINT', 2));
    },
    (err: unknown) => {
      logger.fatal({ err }, 'failed to start');
      process.exit(1);
    },
  );
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
