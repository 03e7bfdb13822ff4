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
  statementTimeoutMs?: number;
}

export function createPool(options: DbOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName,
    types: typeParsers,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
  });
  // A client that loses its server must not crash the process: an idle one reports on the pool,
  // a checked-out one (a transaction waiting on NATS) on itself; its query fails, the next reconnects.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** A Kysely instance over its own pool. `db.destroy()` closes the pool. */
export function createDb<DB>(options: DbOptions): Kysely<DB> {
  return dbOverPool(createPool(options));
}

/** A Kysely instance over a pool the caller also watches (its metrics). `db.destroy()` closes the pool. */
export function dbOverPool<DB>(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
