import pg from 'pg';
import { isAppError } from '@erp/contracts';
import { harness, type Harness } from '@erp/testing';
import {
  answerChangePage,
  changeCursorAfterSnapshot,
  decodeChangeCursor,
  encodeChangeCursor,
  inTransaction,
  installChangeStamp,
  readChangePage,
  requestedChangeCursor,
  sql,
  type ChangeCursor,
  type Generated,
  type Kysely,
  type Transaction,
} from '../src';

interface FeedDb {
  cosas: { id: Generated<number>; empresa_id: number; nombre: string; updated_at: Generated<Date>; cambio_xid: Generated<string> };
}

describe('the change feed of libs/db against Postgres', () => {
  let h: Harness<FeedDb>;
  let db: Kysely<FeedDb>;
  const held: pg.Client[] = [];

  /** A connection of its own, to hold a transaction open while the test reads and writes around it. */
  const connect = async () => {
    const client = new pg.Client({ connectionString: h.iso.databaseUrl, options: '-c search_path=feed' });
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
    for (const deadline = Date.now() + 45_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
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
    h = await harness<FeedDb>('feed', {
      schema: 'feed',
      poolMax: 6,
      migrations: {
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
      },
    });
    db = h.db;
  });
  afterEach(async () => {
    await Promise.all(held.splice(0).map((c) => c.end()));
    await db.deleteFrom('cosas').execute();
  });
  afterAll(() => h?.close());

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

  it('answers a list in cursor mode with cursor pagination only, and a resume cursor even before anything matched', async () => {
    const read = (trx: Transaction<FeedDb>, after: ChangeCursor | undefined) =>
      readChangePage(trx.selectFrom('cosas as c').select(['c.id', 'c.nombre']).where('c.empresa_id', '=', 3), {
        table: 'c',
        after,
        perPage: 2,
      });
    const names = (page: { items: Array<{ nombre: string }> }) => page.items.map((x) => x.nombre);

    const empty = await answerChangePage(db, { per_page: 2 }, read);
    expect(empty).toEqual({
      items: [],
      pagination: { per_page: 2, next_cursor: null, resume_cursor: expect.any(String), has_more: false },
    });
    for (const nombre of ['x', 'y']) await insert(3, nombre);
    const z = await insert(3, 'z');
    await settledPast(await stampOf(z));

    const first = await answerChangePage(db, { per_page: 2, cursor: empty.pagination.resume_cursor }, read);
    expect(names(first)).toEqual(['x', 'y']);
    expect(first.pagination).toEqual({
      per_page: 2,
      next_cursor: first.pagination.resume_cursor,
      resume_cursor: expect.any(String),
      has_more: true,
    });
    const second = await answerChangePage(db, { per_page: 2, cursor: first.pagination.next_cursor! }, read);
    expect(names(second)).toEqual(['z']);
    expect(second.pagination).toEqual({
      per_page: 2,
      next_cursor: null,
      resume_cursor: encodeChangeCursor({ xid: await stampOf(z), id: z }),
      has_more: false,
    });
    const idle = await answerChangePage(db, { per_page: 2, cursor: second.pagination.resume_cursor }, read);
    expect(idle).toEqual({ items: [], pagination: second.pagination });
    await expect(answerChangePage(db, { per_page: 2, cursor: 'nonsense' }, read)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('hands over from a snapshot exactly: what it saw never comes again, what it could not see always comes', async () => {
    const r = [];
    for (const nombre of ['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6']) r.push(await insert(1, nombre));
    const [w1, w3] = [await connect(), await connect()];
    // Held open across the snapshot: invisible to it whatever their ids, so they must come.
    await w1.query('begin');
    await w1.query(`update cosas set nombre = 'r1-w1', updated_at = now() where id = $1`, [r[1]]);
    // Committed before the snapshot with an id above the oldest running one (xmin): seen, so it must not come.
    await rename(r[2]!, 'r2-w2');
    await w3.query('begin');
    await w3.query(`update cosas set nombre = 'r3-w3', updated_at = now() where id = $1`, [r[3]]);

    const exported = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const rows = await trx.selectFrom('cosas').select(['id', 'nombre']).where('empresa_id', '=', 1).orderBy('id').execute();
        return { rows, cursor: await changeCursorAfterSnapshot(trx) };
      });
    expect(exported.rows.map((x) => x.nombre)).toEqual(['r0', 'r1', 'r2-w2', 'r3', 'r4', 'r5', 'r6']);

    // After the snapshot: an update committed before the held ones, an insert, a row it saw changed again.
    await rename(r[4]!, 'r4-w4');
    const r7 = await insert(1, 'r7');
    await rename(r[5]!, 'r5-w6');
    await w3.query('commit');
    await w1.query('commit');
    // The feed answers a change only once every older transaction of the cluster has ended: wait
    // past the newest of them (r5-w6 wrote last), or a page read while another test file's
    // transaction holds the horizon back ends the loop before r7 and r5-w6 come.
    for (const id of [r[1]!, r[3]!, r[4]!, r7, r[5]!]) await settledPast(await stampOf(id));

    const followed: Array<{ id: number; nombre: string }> = [];
    const cursors = [exported.cursor];
    for (let after = requestedChangeCursor(exported.cursor); ;) {
      const page = await sut(after, 1);
      followed.push(...page.rows);
      if (page.positions.length === 0) break;
      after = page.positions.at(-1);
      cursors.push(encodeChangeCursor(after!));
    }
    expect(followed.map((x) => x.nombre).sort()).toEqual(['r1-w1', 'r3-w3', 'r4-w4', 'r5-w6', 'r7']);
    expect(followed.map((x) => x.id).sort((x, y) => x - y)).toEqual([r[1], r[3], r[4], r[5], r7]);
    // The export with the changes after it applied is the table as it is now.
    const merged = new Map(exported.rows.map((x) => [x.id, x.nombre]));
    for (const x of followed) merged.set(x.id, x.nombre);
    const now = await db.selectFrom('cosas').select(['id', 'nombre']).where('empresa_id', '=', 1).orderBy('id').execute();
    expect([...merged].sort(([x], [y]) => x - y)).toEqual(now.map((x) => [x.id, x.nombre]));
    // The snapshot rides along only while it can still exclude something, then cursors are plain again.
    expect(decodeChangeCursor(cursors[0]!)!.snapshot).toBeDefined();
    expect(decodeChangeCursor(cursors.at(-1)!)!.snapshot).toBeUndefined();
  });

  it('hands over from a snapshot only inside the repeatable-read transaction that took it', async () => {
    await expect(db.transaction().execute((trx) => changeCursorAfterSnapshot(trx))).rejects.toThrow(/repeatable-read/);
    await expect(changeCursorAfterSnapshot(db)).rejects.toThrow(/repeatable-read/);
  });

  it('reads back every cursor it writes and refuses any other text, before Postgres would', async () => {
    for (const cursor of [
      { xid: '18446744073709551615', id: 2_147_483_647 },
      { xid: '7', id: 0, snapshot: '7:12:7,9,11' },
      { xid: '9', id: 3, snapshot: '5:5:' },
    ])
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
      encoded(['1', 1, 7]),
      encoded(['1', 1, '0:5:']),
      encoded(['1', 1, '6:5:']),
      encoded(['1', 1, '5:9:4']),
      encoded(['1', 1, '5:9:9']),
      encoded(['1', 1, '5:9:7,6']),
      encoded(['1', 1, '5:9:6,6']),
      encoded(['1', 1, '5:9:6,']),
      encoded(['1', 1, '5:9:6', 'más']),
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
