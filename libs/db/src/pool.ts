import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';

const OID = { INT8: 20, NUMERIC: 1700, DATE: 1082 } as const;

/**
 * Type parsers for every pool we open. Numeric stays an exact decimal string (never a float);
 * `date` stays `YYYY-MM-DD` (pg would build a local-midnight Date that shifts with the time zone);
 * int8 (count(*), sums of integers) becomes a number only when it is exactly representable.
 */
export const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case OID.NUMERIC:
      case OID.DATE:
        return (value: string) => value;
      case OID.INT8:
        return (value: string) => {
          const n = Number(value);
          if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} is not a safe integer`);
          return n;
        };
      default:
        return pg.types.getTypeParser(oid, format as 'text');
    }
  },
} as pg.CustomTypesConfig;

export interface DbOptions {
  connectionString: string;
  /** Pool size; keep services × replicas × max under Postgres max_connections. */
  max?: number;
  applicationName?: string;
  /** Server-side limit of one statement (`statement_timeout`), and the client's wait past it; 30 s unless told, 0 for none. */
  statementTimeoutMs?: number;
  /** How long a new connection may take (TCP, TLS, startup) before the request fails as unavailable; 5 s unless told. */
  connectTimeoutMs?: number;
}

/**
 * How long the client waits for a statement's answer beyond the server's own `statement_timeout`:
 * past it the server is taken as gone (a host lost, a network cut: no reset ever arrives) and the
 * connection is destroyed, so the caller gets an unavailable error instead of a hang.
 */
export const CLIENT_READ_MARGIN_MS = 5_000;

/** The message of pg's error for a statement whose answer did not come within `query_timeout`. */
export const QUERY_READ_TIMEOUT = 'Query read timeout';

/**
 * A pool that notices a lost server quickly and never hands out a broken connection twice:
 * - a connection attempt fails after `connectTimeoutMs` (a dead primary behind a Service, an address
 *   that swallows packets);
 * - TCP keepalive on every socket, so idle connections through proxies and NAT are neither dropped
 *   silently nor kept on a peer that is gone;
 * - a statement waits at most its `statement_timeout` plus CLIENT_READ_MARGIN_MS for an answer; past
 *   that its connection is destroyed (pg alone would keep the socket and the stale answer);
 * - a connection whose server ended it (a failover, a terminated backend) leaves the pool: idle, by
 *   the pool's own error handling; checked out, on release, since pg marks it not queryable.
 */
export function createPool(options: DbOptions): pg.Pool {
  const statementTimeout = options.statementTimeoutMs ?? 30_000;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName,
    types: typeParsers,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // 0 is no limit (migrations): then the client waits as long as the server works, too.
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout, query_timeout: statementTimeout + CLIENT_READ_MARGIN_MS } : {}),
  });
  // A client that loses its server must not crash the process: an idle one reports on the pool,
  // a checked-out one (a transaction waiting on NATS) on itself; its query fails, the next reconnects.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    destroyOnReadTimeout(client);
  });
  return pool;
}

/**
 * pg rejects a statement past `query_timeout` but keeps the connection, its statement still in
 * flight: destroying the socket ends it, pg marks the client not queryable and the pool drops it
 * on release instead of reusing a connection to a server that may never answer.
 */
function destroyOnReadTimeout(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const result = query(...args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).catch((err: unknown) => {
        if (err instanceof Error && err.message === QUERY_READ_TIMEOUT) {
          (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
        }
      });
    }
    return result;
  };
}

/** A Kysely instance over its own pool. `db.destroy()` closes the pool. */
export function createDb<DB>(options: DbOptions): Kysely<DB> {
  return dbOverPool(createPool(options));
}

/** A Kysely instance over a pool the caller also watches (its metrics). `db.destroy()` closes the pool. */
export function dbOverPool<DB>(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
