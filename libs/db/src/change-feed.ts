import { sql, type Kysely, type QueryExecutorProvider, type SelectQueryBuilder, type Transaction } from 'kysely';
import { AppError, INVALID_CURSOR, type CursorPagination } from '@erp/contracts';
import { inTransaction } from './transaction';

/**
 * The change feed behind delta sync (`order_by=updated_at`, `cursor`, `updated_since`), once for
 * every resource that offers it.
 *
 * Every write of a row stamps it with the id of the transaction that wrote it (`cambio_xid`, an
 * `xid8`, see `installChangeStamp`). Transaction ids only grow, and a page answers only rows
 * stamped before every transaction still running (`pg_snapshot_xmin`), in (stamp, id) order: a
 * change that commits later always carries a stamp at or after that horizon, so it lands after
 * every position already read and a reader following the cursor never passes over it.
 *
 * The stamps are transaction ids of one Postgres cluster: rows copied to another server (dump and
 * restore, logical replication) keep stamps its counter knows nothing of. A schema moves to a
 * server of its own only as a promoted physical replica, whose counter continues the same history
 * (docs/operations.md, "Moving a schema to its own server").
 */

/** The column every row of a feed carries: the id of the transaction that last wrote it. */
export const CHANGE_STAMP = 'cambio_xid';

/**
 * Position in a feed: the stamp (`xid8` as text) and the id of the last row read (0: before every
 * row of that stamp). A position handed over from a snapshot also carries the snapshot
 * (`pg_snapshot` text, `xmin:xmax:xip,…`): the changes it saw are not answered again, and it is
 * dropped once the position passes its `xmax`, beyond which it saw nothing.
 */
export interface ChangeCursor {
  xid: string;
  id: number;
  snapshot?: string;
}

const MAX_XID8 = 2n ** 64n - 1n;
const MAX_ROW_ID = 2_147_483_647;

/** The cursor as partners see it: opaque text (base64url of JSON), `[xid, id]` or `[xid, id, snapshot]`. */
export function encodeChangeCursor(cursor: ChangeCursor): string {
  const value = cursor.snapshot === undefined ? [cursor.xid, cursor.id] : [cursor.xid, cursor.id, cursor.snapshot];
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The position a cursor names, or undefined when it is not one this API issued (nothing Postgres would refuse gets through). */
export function decodeChangeCursor(raw: string): ChangeCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length < 2 || value.length > 3) return undefined;
    const [xid, id, snapshot] = value as unknown[];
    if (!isXid(xid)) return undefined;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_ROW_ID) return undefined;
    if (value.length === 2) return { xid, id };
    return typeof snapshot === 'string' && parseSnapshot(snapshot) ? { xid, id, snapshot } : undefined;
  } catch {
    return undefined;
  }
}

const isXid = (value: unknown): value is string => typeof value === 'string' && /^\d{1,20}$/.test(value) && BigInt(value) <= MAX_XID8;

/** The parts of a `pg_snapshot` text, or undefined unless Postgres would read it as one (xmin ≤ xip ascending < xmax). */
function parseSnapshot(text: string): { xmin: bigint; xmax: bigint; xip: bigint[] } | undefined {
  const parts = /^(\d{1,20}):(\d{1,20}):((?:\d{1,20})(?:,\d{1,20})*)?$/.exec(text);
  if (!parts || ![parts[1], parts[2], ...(parts[3]?.split(',') ?? [])].every(isXid)) return undefined;
  const xmin = BigInt(parts[1]!);
  const xmax = BigInt(parts[2]!);
  const xip = parts[3]?.split(',').map(BigInt) ?? [];
  if (xmin < 1n || xmax < xmin) return undefined;
  if (xip.some((x, i) => x < xmin || x >= xmax || (i > 0 && x <= xip[i - 1]!))) return undefined;
  return { xmin, xmax, xip };
}

/** Where a request resumes: undefined without a cursor; a cursor this API did not issue is refused (400 naming `cursor`). */
export function requestedChangeCursor(cursor: string | undefined): ChangeCursor | undefined {
  if (cursor === undefined) return undefined;
  const after = decodeChangeCursor(cursor);
  if (!after) throw new AppError('BAD_REQUEST', 'Parámetros inválidos', { cursor: [INVALID_CURSOR] });
  return after;
}

/** One page of a feed: its rows in feed order, the position of each, and whether more follow. */
export interface ChangePage<R> {
  rows: R[];
  positions: ChangeCursor[];
  more: boolean;
}

/**
 * One page of the feed of the stamped table that `query` reads as `table` (its alias): the rows
 * `query` selects (with their `id`) after `after`, at most `perPage`, in feed order. `query`
 * brings the resource's own scope and filters (company first). Run it in a repeatable-read
 * transaction so the rows, whatever the caller reads next for them, and the horizon share one
 * snapshot.
 */
export async function readChangePage<DB, TB extends keyof DB, O extends { id: number }>(
  query: SelectQueryBuilder<DB, TB, O>,
  options: { table: string; after: ChangeCursor | undefined; perPage: number },
): Promise<ChangePage<O>> {
  const stamp = sql.ref(`${options.table}.${CHANGE_STAMP}`);
  const id = sql.ref(`${options.table}.id`);
  let page = query
    .select(sql<string>`${stamp}::text`.as('feed_xid'))
    .where(sql<boolean>`${stamp} < pg_snapshot_xmin(pg_current_snapshot())`);
  const { after } = options;
  if (after) page = page.where(sql<boolean>`(${stamp}, ${id}) > (${after.xid}::xid8, ${after.id}::int)`);
  if (after?.snapshot) page = page.where(sql<boolean>`not pg_visible_in_snapshot(${stamp}, ${after.snapshot}::pg_snapshot)`);
  const xmax = after?.snapshot ? parseSnapshot(after.snapshot)!.xmax : undefined;
  const fetched = (await page
    .orderBy(sql`${stamp}`)
    .orderBy(sql`${id}`)
    .limit(options.perPage + 1)
    .execute()) as Array<O & { feed_xid: string }>;
  const rows: O[] = [];
  const positions: ChangeCursor[] = [];
  for (const { feed_xid, ...row } of fetched.slice(0, options.perPage)) {
    rows.push(row as unknown as O);
    positions.push(
      xmax !== undefined && BigInt(feed_xid) < xmax
        ? { xid: feed_xid, id: row.id, snapshot: after!.snapshot! }
        : { xid: feed_xid, id: row.id },
    );
  }
  return { rows, positions, more: fetched.length > options.perPage };
}

/**
 * The cursor from which a feed answers exactly what changed after the snapshot of the current
 * transaction: every row whose last write that snapshot did not see (committed later, or still
 * running when it was taken, whatever its transaction id), and none whose last write it saw. Call
 * it inside the REPEATABLE READ (or SERIALIZABLE) transaction that read the resource, e.g. an
 * export: `GET /{resource}?order_by=updated_at&cursor=<this>` then continues from exactly what
 * was read, with no gap and no overlap. The cursor is as opaque as any other, and works for every
 * feed (it names transactions, not rows). Throws outside such a transaction, where the next
 * statement would read another snapshot.
 */
export async function changeCursorAfterSnapshot(trx: QueryExecutorProvider): Promise<string> {
  const { rows } = await sql<{ isolation: string; snapshot: string }>`
    select current_setting('transaction_isolation') as isolation, pg_current_snapshot()::text as snapshot`.execute(trx);
  const { isolation, snapshot } = rows[0]!;
  if (isolation !== 'repeatable read' && isolation !== 'serializable')
    throw new Error(`changeCursorAfterSnapshot needs the repeatable-read transaction that read the data, not a ${isolation} one`);
  const { xmin, xmax, xip } = parseSnapshot(snapshot)!;
  // Nothing was running: the snapshot saw every transaction before xmax and none from it on.
  if (xip.length === 0) return encodeChangeCursor({ xid: String(xmax), id: 0 });
  return encodeChangeCursor({ xid: String(xmin), id: 0, snapshot });
}

/**
 * The cursor-mode branch of a list handler: refuses a cursor this API did not issue (400), reads
 * the page with `read` in one repeatable-read transaction, and answers its cursor pagination:
 * `next_cursor` while more rows follow, and always a `resume_cursor`, where to ask later for what
 * changed after this page (the last row's position; without one, the one asked for; on a first
 * page with no rows, the horizon, before which nothing matched).
 */
export async function answerChangePage<DB, T>(
  db: Kysely<DB>,
  request: { cursor?: string | undefined; per_page: number },
  read: (trx: Transaction<DB>, after: ChangeCursor | undefined) => Promise<ChangePage<T>>,
): Promise<{ items: T[]; pagination: CursorPagination }> {
  const after = requestedChangeCursor(request.cursor);
  const { rows, more, resume } = await inTransaction(
    db,
    async (trx) => {
      const page = await read(trx, after);
      const resume = page.positions.at(-1) ?? after ?? (await horizonOf(trx));
      return { ...page, resume };
    },
    { isolation: 'repeatable read' },
  );
  const last = encodeChangeCursor(resume);
  return {
    items: rows,
    pagination: { per_page: request.per_page, next_cursor: more ? last : null, resume_cursor: last, has_more: more },
  };
}

/** The position before which the current snapshot's feed is complete: every transaction older than it has ended. */
async function horizonOf(trx: QueryExecutorProvider): Promise<ChangeCursor> {
  const { rows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(trx);
  return { xid: rows[0]!.xmin, id: 0 };
}

/**
 * In a migration: stamps every row of `table` (in the migration's schema) with the transaction
 * that last wrote it, the column a feed pages by. New rows take the stamp from the column's
 * default; updates from a trigger, for every update or only those where `when` holds (e.g. the
 * changes a partner can see, `old.updated_at is distinct from new.updated_at`). The index serves
 * a company's feed in order.
 */
export async function installChangeStamp(db: Kysely<unknown>, table: string, options: { when?: string } = {}): Promise<void> {
  const fn = sql.id(`${table}_marcar_cambio`);
  await sql`alter table ${sql.id(table)} add column ${sql.id(CHANGE_STAMP)} xid8 not null default pg_current_xact_id()`.execute(db);
  await sql`
    create function ${fn}() returns trigger language plpgsql as $$
    begin
      new.${sql.raw(CHANGE_STAMP)} := pg_current_xact_id();
      return new;
    end $$`.execute(db);
  await sql`
    create trigger ${sql.id(`${table}_cambio`)} before update on ${sql.id(table)} for each row
    ${options.when ? sql`when (${sql.raw(options.when)})` : sql``} execute function ${fn}()`.execute(db);
  await sql`create index ${sql.id(`${table}_empresa_cambio_idx`)} on ${sql.id(table)} (empresa_id, ${sql.id(CHANGE_STAMP)}, id)`.execute(
    db,
  );
}
