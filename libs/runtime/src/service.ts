import { sql, type Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import { Bus, checkEventStream, outboxBacklog, provisionJetStream, type OutboxRelay } from '@erp/bus';
import { createPool, dbOverPool, migrateSchema, type Migrations } from '@erp/db';
import { BUS_IDENTITIES, streamFamiliesOf, type BusIdentity, type ServiceName } from '@erp/contracts';
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
import { createReadinessChecks, startOpsServer, type ReadinessCheck } from './ops-server';
import { startOutboxRelay } from './outbox-relay';
import { createShutdown } from './shutdown';
import type { Worker } from './worker';

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
  /**
   * Registers a stop step of what takes work in (a server, a consumer, its clients). These steps run
   * first, in reverse order of registration, under the deadline; the workers, the bus and the
   * databases stop after them.
   */
  onShutdown(name: string, step: () => Promise<void>): void;
  /**
   * Registers a worker the service started (`startPeriodic`, `startLoop`): the runtime stops it
   * after what takes work in and before the bus, workers in reverse order of registration.
   * Answers the worker.
   */
  addWorker<W extends Worker>(name: string, worker: W): W;
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
  /** Stops phase by phase (see SHUTDOWN_PHASES) under the configured deadline. Resolves false when the deadline hit. */
  stop(): Promise<boolean>;
}

/**
 * Starts a service in the fixed order: db → NATS → event stream → handlers (setup) → ops server,
 * and prepares the stop, phase by phase (see SHUTDOWN_PHASES). Telemetry is started earlier, by the entry point's first import.
 */
export async function startService<C extends BaseConfig, DB>(
  spec: ServiceSpec<C, DB>,
  options: StartOptions = {},
): Promise<RunningService<C, DB>> {
  const { config } = spec;
  const logger = options.logger ?? createLogger(spec.name, config.LOG_LEVEL);
  const shutdown = createShutdown(logger, config.SHUTDOWN_TIMEOUT_MS);
  const readiness = createReadinessChecks();
  let stopping = false;

  const pool = createPool({
    connectionString: config.DATABASE_URL,
    max: config.DB_POOL_MAX,
    applicationName: spec.name,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
  });
  const rootDb = dbOverPool<unknown>(pool);
  shutdown.add('databases', 'db', () => rootDb.destroy());
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
    shutdown.add('databases', 'db-read', () => readDb.destroy());
    registerExportReplica(registry, readDb.withSchema(spec.schema));
    readiness.add('postgres-read', async () => (await sql`select 1`.execute(readDb), 'ok'), { required: false });
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
  shutdown.add('bus', 'nats', () => bus.drain());
  // The lag of the durable consumers the service reads (BUS_IDENTITIES), as JetStream counts it.
  const identity: BusIdentity = BUS_IDENTITIES[spec.name];
  const durables = identity.consumers;
  if (Object.keys(durables).length > 0) registerConsumerMetrics(registry, jetStreamConsumerStates(bus, durables));
  // Migrating at start is for local runs and tests, on a NATS without identities: the service
  // then also does the operator's part. In production the migration step did it.
  if (options.migrateOnStart) await provisionJetStream(bus, [spec.name]);
  else for (const family of streamFamiliesOf(identity)) await checkEventStream(bus, family);

  readiness.add('postgres', async () => (await sql`select 1`.execute(rootDb), 'ok'));
  readiness.add('nats', async () => {
    if (!bus.isConnected()) throw new Error('disconnected');
    return 'ok';
  });

  // Every service schema has an outbox (createOutboxTables is part of each first migration). The
  // relay stops while the bus drains, once its subscriptions have: what the handlers still
  // answering commit is published before the connection closes.
  const outbox = startOutboxRelay({ db, bus });
  bus.onDrain(() => outbox.stop());

  const ctx: ServiceContext<C, DB> = {
    name: spec.name,
    config,
    logger,
    db,
    bus,
    outbox,
    metrics: registry,
    onShutdown: (name, step) => shutdown.add('intake', name, step),
    addWorker: (name, worker) => {
      shutdown.add('workers', name, () => worker.stop());
      return worker;
    },
    addReadinessCheck: (name, check, opts) => readiness.add(name, check, opts),
  };
  await spec.setup(ctx);
  // The subscriptions setup made are known to the server once this round trip returns: a request
  // sent the moment the service says it started (or ready) finds a responder, never "no responders".
  await bus.nc.flush();

  const ops = await startOpsServer({
    port: config.OPS_PORT,
    host: config.BIND_ADDRESS,
    metrics: registry,
    readiness,
    stopping: () => stopping,
  });
  shutdown.add('ops', 'ops-server', () => ops.close());
  logger.info({ opsPort: ops.port, schema: spec.schema, prefix: config.SUBJECT_PREFIX }, 'service started');

  let stopped: Promise<boolean> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      logger.info({}, 'stopping');
      const inTime = await shutdown.run();
      logger.info({ inTime }, 'stopped');
      return inTime;
    })());

  return { ctx, opsPort: ops.port, stop };
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
