import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { Bus, type BusOptions } from '@erp/bus';
import { createPool, migrateSchema, type Migrations } from '@erp/db';
import { createLogger, startService, type BaseConfig, type RunningService, type ServiceSpec } from '@erp/runtime';
import { eventually } from './eventually';
import { isolate, serviceEnv, type Isolation } from './isolation';
import { consumerBacklogs, deleteStreamsOf } from './streams';

export interface HarnessOptions {
  /** The schema `db` is bound to: unqualified table names are its tables. */
  schema?: string;
  /**
   * The schema's migrations, run before the harness answers: for tests that call handlers and
   * repositories directly. A service started with `start` migrates its own schema.
   */
  migrations?: Migrations;
  /** Connections of the pool under `db` (default 10). */
  poolMax?: number;
  /** Called with the SQL of every statement `db` runs, migrations included: for tests that count statements. */
  onQuery?: (sql: string) => void;
  /** Request timeout of the client bus (default the bus's own). */
  requestTimeoutMs?: number;
}

export interface OpenDbOptions {
  /** Connections of its pool (default 2). */
  max?: number;
  /** Called with the SQL of every statement it runs. */
  onQuery?: (sql: string) => void;
}

export interface HarnessStartOptions {
  /** Environment beyond the isolation's (`serviceEnv`): the service's own settings. */
  env?: Record<string, string>;
  /** Migrate the schema and provision JetStream at start, as tests and `npm start` do (default true). */
  migrate?: boolean;
}

type ClientBusOptions = Partial<Omit<BusOptions, 'servers' | 'name' | 'logger'>>;

/**
 * What an integration test runs against: an isolated database (the schema migrated when asked),
 * a Kysely typed by the caller, a client bus on the isolation's subject prefix, and the services
 * it starts in this process. `close()` takes it all down, last started first.
 */
export interface Harness<DB> {
  readonly iso: Isolation;
  /** Bound to `schema` when one was given; a pool of the harness's own, apart from any started service's. */
  readonly db: Kysely<DB>;
  /** The pool under `db`: for a test that holds connections of its own (a lock, a transaction left open). */
  readonly pool: pg.Pool;
  /** A client on the isolation's prefix: requests to the service under test, stand-ins of the services it calls. */
  readonly bus: Bus;
  /** The rows of one SQL statement on the isolation's database. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<R extends pg.QueryResultRow = Record<string, any>>(text: string, params?: unknown[]): Promise<R[]>;
  /** Another Kysely over the isolation's database, bound to the same schema, with a pool of its own. */
  openDb(options?: OpenDbOptions): Kysely<DB>;
  /** Another client on the isolation's prefix (a second party on the bus). */
  connect(name: string, options?: ClientBusOptions): Promise<Bus>;
  /** The environment of a service started on the isolation, `extra` added or overriding. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Starts a service in this process on the isolation; `build` makes its spec from the environment. */
  start<C extends BaseConfig>(
    build: (env: Record<string, string>) => ServiceSpec<C>,
    options?: HarnessStartOptions,
  ): Promise<RunningService<C>>;
  /** Resolves once each durable consumer of the events stream has had everything published to it acknowledged. */
  untilConsumed(...durables: string[]): Promise<void>;
  /** A step of `close()`, run after the services stopped and before the bus and the database go (last registered first). */
  onClose(step: () => unknown): void;
  /** Stops the services (last started first), runs the `onClose` steps, deletes the JetStream streams and stores of the prefix, drains the buses, closes the pools and drops the database. */
  close(): Promise<void>;
}

/**
 * Isolates a test file (`isolate(label)`) and prepares what its tests share. Modelled on
 * immich's medium tests: a spec states only what differs (its stand-ins, its service's settings).
 */
export async function harness<DB = unknown>(label: string, options: HarnessOptions = {}): Promise<Harness<DB>> {
  const iso = await isolate(label);
  const logger = createLogger(`${label}-test`, 'silent');
  const services: Array<RunningService<BaseConfig>> = [];
  const closeSteps: Array<() => unknown> = [];
  const buses: Bus[] = [];
  const pools: Array<Kysely<unknown>> = [];

  const open = (max: number, onQuery?: (sql: string) => void) => {
    const pool = createPool({ connectionString: iso.databaseUrl, max, applicationName: `${label}-test` });
    const root = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool }),
      ...(onQuery ? { log: (event) => void (event.level === 'query' && onQuery(event.query.sql)) } : {}),
    });
    pools.push(root);
    const db = (options.schema ? root.withSchema(options.schema) : root) as unknown as Kysely<DB>;
    return { pool, db };
  };
  const connect = async (name: string, busOptions: ClientBusOptions = {}) => {
    const bus = await Bus.connect({ servers: iso.natsUrl, prefix: iso.subjectPrefix, name, logger, ...busOptions });
    buses.push(bus);
    return bus;
  };

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const failures: unknown[] = [];
      const attempt = async (step: () => unknown) => {
        try {
          await step();
        } catch (err) {
          failures.push(err);
        }
      };
      for (const service of [...services].reverse()) await attempt(() => service.stop());
      for (const step of [...closeSteps].reverse()) await attempt(step);
      const client = buses.find((bus) => !bus.nc.isClosed());
      if (client) {
        await attempt(() => deleteStreamsOf(client.nc, iso.subjectPrefix));
      }
      // A test may have drained a bus of its own already (to watch in-flight requests finish).
      for (const bus of [...buses].reverse()) if (!bus.nc.isClosed()) await attempt(() => bus.drain());
      for (const db of [...pools].reverse()) await attempt(() => db.destroy());
      await attempt(() => iso.drop());
      if (failures.length > 0) throw failures[0];
    })());

  try {
    const { pool, db } = open(options.poolMax ?? 10, options.onQuery);
    if (options.migrations) {
      if (!options.schema) throw new Error('harness: migrations need the schema they create');
      await migrateSchema(pools[0]!, options.schema, options.migrations);
    }
    const bus = await connect(`${label}-client`, options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {});
    return {
      iso,
      db,
      pool,
      bus,
      query: async (text, params = []) => (await pool.query(text, params)).rows,
      openDb: (dbOptions = {}) => open(dbOptions.max ?? 2, dbOptions.onQuery).db,
      connect,
      env: (extra = {}) => serviceEnv(iso, extra),
      start: async (build, startOptions = {}) => {
        const service = await startService(build(serviceEnv(iso, startOptions.env)), { migrateOnStart: startOptions.migrate ?? true });
        services.push(service as unknown as RunningService<BaseConfig>);
        return service;
      },
      untilConsumed: async (...durables) => {
        await eventually(async () => {
          const backlogs = await consumerBacklogs(bus.nc, iso.subjectPrefix);
          for (const durable of durables) {
            const backlog = backlogs.find((b) => b.name === durable);
            if (!backlog) throw new Error(`${durable} is no consumer of the streams of ${iso.subjectPrefix}`);
            if (backlog.pending + backlog.unacknowledged > 0)
              throw new Error(`${durable} busy: ${backlog.pending} pending, ${backlog.unacknowledged} unacknowledged`);
          }
        });
      },
      onClose: (step) => void closeSteps.push(step),
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
