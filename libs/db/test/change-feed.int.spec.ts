import pg from 'pg';
import { isAppError } from '@erp/contracts';
import { isolate, type Isolation } from '@erp/testing';
import {
  createDb,
  decodeChangeCursor,
  encodeChangeCursor,
  inTransaction,
  installChangeStamp,
  migrateSchema,
  readChangePage,
  requestedChangeCursor,
  sql,
  type ChangeCursor,
  type Generated,
  type Kysely,
} from '../src';

interface FeedDb {
  cosas: { id: Generated<number>; empresa_id: number; nombre: string; updated_at: Generated<Date>; cambio_xid: Generated<string> };
}

describe('the change feed of libs/db against Postgres', () => {
  let iso: Isolation;
  let db: Kysely<FeedDb>;
  const held: pg.Client[] = [];

  /** A connection of its own, to hold a transaction open while the test reads and writes around it. */
  const connect = async () => {
    const client = new pg.Client({ connectionString: iso.databaseUrl, options: '-c search_path=feed' });
    await client.connect();
    held.push(client);
    return client;
  };
  const insert = async (empresaId: number, nombre: string) =>
    (await db.insertInto('cosas').values({ empresa_id: empresaId, nombre }).returning('id').executeTakeFirstOrThrow()).id;
  const rename = (id: number, nombre: string) =>
    db.updateTable('cosas').set({ nombre, updated_at: new Date() }).where('id', '=', id).execute();
  const stampOf = async (id: number) =>
    (
      await db
        .selectFrom('cosas')
        .select(sql<string>`cambio_xid::text`.as('x'))
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).x;

  /**
   * Waits until no transaction older than `xid` runs anywhere on the server: transaction ids are
   * the cluster's, so other test files' transactions hold the feed's horizon back too.
   */
  const settledPast = async (xid: string) => {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
      const { rows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(db);
      if (BigInt(rows[0]!.xmin) > BigInt(xid)) return;
    }
    throw new Error(`Transactions older than ${xid} still running`);
  };

  /** One page of company 1's feed after `after`, read as a handler reads it. */
  const sut = (after: ChangeCursor | undefined, perPage = 100) =>
    inTransaction(
      db,
      (trx) =>
        readChangePage(trx.selectFrom('cosas as c').select(['c.id', 'c.nombre']).where('c.empresa_id', '=', 1), {
          table: 'c',
          after,
          perPage,
        }),
      { isolation: 'repeatable read' },
    );

  beforeAll(async () => {
    iso = await isolate('feed');
    const admin = createDb({ connectionString: iso.databaseUrl, max: 2 });
    await migrateSchema(admin, 'feed', {
      '0001-cosas': {
        up: async (m: Kysely<unknown>) => {
          await sql`
            create table cosas (
              id integer generated always as identity primary key,
              empresa_id integer not null,
              nombre text not null,
              updated_at timestamptz not null default now()
            )`.execute(m);
          await installChangeStamp(m, 'cosas', { when: 'old.updated_at is distinct from new.updated_at' });
        },
      },
    });
    await admin.destroy();
    db = createDb({ connectionString: iso.databaseUrl, max: 6 }).withSchema('feed') as unknown as Kysely<FeedDb>;
  });
  afterEach(async () => {
    await Promise.all(held.splice(0).map((c) => c.end()));
    await db.deleteFrom('cosas').execute();
  });
  afterAll(async () => {
    await db?.destroy();
    await iso?.drop();
  });

  it('stamps a row with the transaction of each write that the trigger’s condition lets through', async () => {
    const id = await insert(1, 'a');
    const inserted = await stampOf(id);
    await db.updateTable('cosas').set({ nombre: 'b' }).where('id', '=', id).execute();
    expect(await stampOf(id)).toBe(inserted);
    const { rows } = await sql<{ x: string }>`
      with w as (update feed.cosas set updated_at = now() where id = ${id} returning cambio_xid)
      select (select cambio_xid from w)::text = pg_current_xact_id()::text as x`.execute(db);
    expect(rows[0]!.x).toBe(true);
    expect(BigInt(await stampOf(id))).toBeGreaterThan(BigInt(inserted));
  });

  it('pages a company’s changes in order, from a cursor, without another company’s rows', async () => {
    const ids = [];
    for (const nombre of ['a', 'b', 'c', 'd', 'e']) ids.push(await insert(1, nombre));
    await insert(2, 'ajena');
    await rename(ids[1]!, 'b2');
    await settledPast(await stampOf(ids[1]!));

    const first = await sut(undefined, 2);
    expect(first.rows.map((r) => r.nombre)).toEqual(['a', 'c']);
    expect(first.more).toBe(true);
    expect(first.positions).toEqual([
      { xid: await stampOf(ids[0]!), id: ids[0] },
      { xid: await stampOf(ids[2]!), id: ids[2] },
    ]);
    const second = await sut(first.positions.at(-1), 2);
    expect(second.rows.map((r) => r.nombre)).toEqual(['d', 'e']);
    expect(second.more).toBe(true);
    const last = await sut(second.positions.at(-1), 2);
    expect(last).toEqual({ rows: [{ id: ids[1], nombre: 'b2' }], positions: [{ xid: await stampOf(ids[1]!), id: ids[1] }], more: false });
    expect(await sut(last.positions.at(-1), 2)).toEqual({ rows: [], positions: [], more: false });
  });

  it('holds back changes stamped after a transaction still running, so its commit is never passed over', async () => {
    const a = await insert(1, 'a');
    const b = await insert(1, 'b');
    const c = await insert(1, 'c');
    const slow = await connect();
    await slow.query('begin');
    await slow.query(`update cosas set nombre = 'a-lenta', updated_at = now() where id = $1`, [a]);
    await rename(b, 'b-rapida'); // a later transaction id, committed first
    await settledPast(await stampOf(c));

    // The running transaction's change is invisible and every change stamped after it waits.
    const before = await sut(undefined);
    expect(before.rows.map((r) => r.nombre)).toEqual(['a', 'c']);
    await slow.query('commit');
    await settledPast(await stampOf(b));
    const after = await sut(before.positions.at(-1));
    expect(after.rows.map((r) => r.nombre)).toEqual(['a-lenta', 'b-rapida']);
    expect(after.positions.map((p) => p.id)).toEqual([a, b]);
  });

  it('reads back every cursor it writes and refuses any other text, before Postgres would', async () => {
    const cursor = { xid: '18446744073709551615', id: 2_147_483_647 };
    expect(decodeChangeCursor(encodeChangeCursor(cursor))).toEqual(cursor);
    const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const forged of [
      'nonsense',
      encoded(['1']),
      encoded([1, 1]),
      encoded(['1', -1]),
      encoded(['1', 1.5]),
      encoded(['1', 2_147_483_648]),
      encoded(['18446744073709551616', 1]),
      encoded(['0x10', 1]),
    ]) {
      expect(decodeChangeCursor(forged)).toBeUndefined();
      const refused = (() => {
        try {
          return requestedChangeCursor(forged);
        } catch (err) {
          return err;
        }
      })();
      expect(isAppError(refused) && { code: refused.code, details: refused.details }).toEqual({
        code: 'BAD_REQUEST',
        details: { cursor: ['Cursor inválido: use el de pagination.next_cursor o resume_cursor'] },
      });
    }
    expect(requestedChangeCursor(undefined)).toBeUndefined();
  });
});
