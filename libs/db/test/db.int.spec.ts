import { isAppError } from '@erp/contracts';
import { isolate, type Isolation } from '@erp/testing';
import {
  compiledOnce,
  compiledPerShape,
  createDb,
  inTransaction,
  migrateSchema,
  pgErrorKind,
  sql,
  translatePgError,
  type Kysely,
} from '../src';

describe('libs/db against Postgres', () => {
  let iso: Isolation;
  let db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  beforeAll(async () => {
    iso = await isolate('db');
    db = createDb({ connectionString: iso.databaseUrl, max: 4 });
  });
  afterAll(async () => {
    await db.destroy();
    await iso.drop();
  });

  it('reads numeric as exact decimal strings, date as Y-m-d whatever the time zone, and counts as numbers', async () => {
    await sql`set timezone to 'Pacific/Kiritimati'`.execute(db);
    const { rows } = await sql<{ big: string; cents: string; day: string; n: number }>`
      select 12345678901234.5678::numeric(18,4) as big, (0.1::numeric + 0.2::numeric) as cents,
             '2026-03-01'::date as day, count(*) as n from generate_series(1, 3)`.execute(db);
    expect(rows[0]).toEqual({ big: '12345678901234.5678', cents: '0.3', day: '2026-03-01', n: 3 });
  });

  it('runs a statement compiled once with each call’s values, its constants kept, one compiled statement per shape', async () => {
    const built: string[] = [];
    const pair = compiledOnce((d: typeof db, a: number, b: string) => {
      built.push('pair');
      return d.selectNoFrom([
        sql<number>`${a}::int`.as('a'),
        sql<string>`${b}::text || ${'!'}::text`.as('b'),
        sql<number>`${a}::int + 1`.as('next'),
      ]);
    });
    expect(await pair(db, 1, 'uno')).toEqual([{ a: 1, b: 'uno!', next: 2 }]);
    expect(await pair(db, 7, 'siete')).toEqual([{ a: 7, b: 'siete!', next: 8 }]);
    const filtered = compiledPerShape((d: typeof db, shape: { above: boolean }, min: number | undefined) => {
      built.push(`above ${shape.above}`);
      const q = d
        .selectFrom(sql<{ n: number }>`(select generate_series(1, 5) as n)`.as('s'))
        .select('s.n')
        .orderBy('s.n');
      return shape.above ? q.where('s.n', '>', min!) : q;
    });
    expect((await filtered(db, { above: true }, 3)).map((r) => r.n)).toEqual([4, 5]);
    expect((await filtered(db, { above: false }, undefined)).map((r) => r.n)).toEqual([1, 2, 3, 4, 5]);
    expect((await filtered(db, { above: true }, 1)).map((r) => r.n)).toEqual([2, 3, 4, 5]);
    expect(built).toEqual(['pair', 'above true', 'above false']);
  });

  it('migrates each schema on its own: same table names never collide, and a second run applies nothing', async () => {
    const migrations = {
      '0001-things': {
        up: async (m: Kysely<unknown>) => {
          await m.schema
            .createTable('things')
            .addColumn('id', 'integer', (c) => c.primaryKey())
            .execute();
          await sql`create index things_id_idx on things (id)`.execute(m);
        },
      },
    };
    await migrateSchema(db, 'alpha', migrations);
    await migrateSchema(db, 'beta', migrations);
    const again = await migrateSchema(db, 'alpha', migrations);
    expect(again.results).toEqual([]);
    const { rows } = await sql<{ table_schema: string }>`
      select table_schema from information_schema.tables where table_name = 'things' order by 1`.execute(db);
    expect(rows.map((r) => r.table_schema)).toEqual(['alpha', 'beta']);
  });

  it('lets an older release migrate a schema a newer release already migrated (rollback, then upgrade)', async () => {
    const first = { '0001-a': { up: async (m: Kysely<unknown>) => void (await sql`create table a (id int)`.execute(m)) } };
    const second = { ...first, '0002-b': { up: async (m: Kysely<unknown>) => void (await sql`create table b (id int)`.execute(m)) } };
    await migrateSchema(db, 'rolled', second);
    const sut = await migrateSchema(db, 'rolled', first);
    expect(sut.ahead).toEqual(['0002-b']);
    expect(sut.results).toEqual([]);
    // The newer release comes back: nothing left to apply.
    expect((await migrateSchema(db, 'rolled', second)).results).toEqual([]);
  });

  it('gives migrations their own statement timeout instead of the pool’s, and a lock timeout', async () => {
    const hurried = createDb({ connectionString: iso.databaseUrl, max: 2, statementTimeoutMs: 200 });
    try {
      const slow = { '0001-slow': { up: async (m: Kysely<unknown>) => void (await sql`select pg_sleep(0.5)`.execute(m)) } };
      await expect(migrateSchema(hurried, 'slow', slow, { statementTimeoutMs: 5_000 })).resolves.toMatchObject({
        results: [{ status: 'Success' }],
      });

      await sql`create table locked (id int)`.execute(db);
      const holder = await db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await sql`lock table locked in access exclusive mode`.execute(conn);
        const blocked = {
          '0001-alter': { up: async (m: Kysely<unknown>) => void (await sql`alter table public.locked add column x int`.execute(m)) },
        };
        const started = Date.now();
        const outcome = await migrateSchema(hurried, 'blocked', blocked, { statementTimeoutMs: 5_000, lockTimeoutMs: 100 }).catch(
          (e: unknown) => e,
        );
        await sql`rollback`.execute(conn);
        return { outcome, ms: Date.now() - started };
      });
      expect(holder.outcome).toBeInstanceOf(Error);
      expect(String((holder.outcome as Error).cause)).toMatch(/lock timeout/);
      expect(holder.ms).toBeLessThan(2_000);
    } finally {
      await hurried.destroy();
    }
  });

  it('translates constraint violations into domain errors', async () => {
    await sql`create table uniq (code text primary key, parent text references uniq(code))`.execute(db);
    await sql`insert into uniq values ('a', null)`.execute(db);
    const dup = await sql`insert into uniq values ('a', null)`.execute(db).catch((e: unknown) => e);
    expect(pgErrorKind(dup)).toBe('unique_violation');
    const conflict = translatePgError(dup);
    expect(isAppError(conflict) && conflict.code).toBe('CONFLICT');
    const orphan = await sql`insert into uniq values ('b', 'zzz')`.execute(db).catch((e: unknown) => e);
    const invalid = translatePgError(orphan);
    expect(isAppError(invalid) && invalid.code).toBe('VALIDATION_FAILED');
    // A value Postgres cannot hold (SQLSTATE 22021) is the sender's data, not a server fault.
    const nul = await sql`insert into uniq values (${'c\u0000d'}, null)`.execute(db).catch((e: unknown) => e);
    expect(pgErrorKind(nul)).toBe('invalid_data');
    const refused = translatePgError(nul);
    expect(isAppError(refused) && refused.code).toBe('VALIDATION_FAILED');
    const other = new Error('not a database error');
    expect(translatePgError(other)).toBe(other);
  });

  it('survives the server ending a checked-out connection (a transaction waiting between queries)', async () => {
    const waiting = db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(db);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the error arrives while no query runs
      await sql`select 1`.execute(trx);
    });
    // An outage for the caller (503, retried), not a fault of ours (500).
    const err = await waiting.catch((e: unknown) => e);
    expect(pgErrorKind(err)).toBe('unavailable');
    const { rows } = await sql<{ ok: number }>`select 1 as ok`.execute(db);
    expect(rows[0]!.ok).toBe(1);
  });

  it('retries a transaction whole after a serialization failure, so both concurrent writers succeed', async () => {
    await sql`create table counter (id int primary key, n int not null)`.execute(db);
    await sql`insert into counter values (1, 0)`.execute(db);
    let attempts = 0;
    const increment = () =>
      inTransaction(
        db,
        async (trx) => {
          attempts++;
          const { rows } = await sql<{ n: number }>`select n from counter where id = 1`.execute(trx);
          await new Promise((resolve) => setTimeout(resolve, 30));
          await sql`update counter set n = ${rows[0]!.n + 1} where id = 1`.execute(trx);
        },
        { isolation: 'serializable' },
      );
    await Promise.all([increment(), increment(), increment()]);
    const { rows } = await sql<{ n: number }>`select n from counter where id = 1`.execute(db);
    expect(rows[0]!.n).toBe(3);
    expect(attempts).toBeGreaterThan(3);
  });
});
