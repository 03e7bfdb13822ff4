import { sql, type Expression, type QueryExecutorProvider, type RawBuilder } from 'kysely';

/**
 * SQL that builds, in Postgres, the JSON the API answers: compact text in the exact form the
 * contracts' output serialises to, so a service can pass it on without parsing it (see the bus's
 * `JsonText`). Numbers, timestamps and field order follow the contracts' transforms.
 */

/** A value of the JSON: a column by name (`'v.total'`, as `sql.ref` reads it) or any expression. */
export type JsonValue = Expression<unknown> | string;

const expression = (value: JsonValue): Expression<unknown> => (typeof value === 'string' ? sql.ref(value) : value);

/** A `numeric` as a JSON number written as the contracts write it: without trailing zeros (12.50 → 12.5). */
export function jsonDecimal(value: JsonValue): RawBuilder<unknown> {
  return sql`trim_scale(${expression(value)})`;
}

/**
 * A `timestamptz` as the contracts write it (`Date#toISOString`): UTC, milliseconds truncated as
 * a JS Date truncates the microseconds Postgres keeps.
 */
export function jsonTimestamp(value: JsonValue): RawBuilder<unknown> {
  return sql`to_char(${expression(value)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * One JSON object with these fields in this order (`row_to_json` of a one-row select: compact,
 * unlike `json_build_object`). Values may refer to the tables of the enclosing query; a string is
 * a column's name, never a text value.
 */
export function jsonObject(fields: Record<string, JsonValue>): RawBuilder<unknown> {
  const columns = Object.entries(fields).map(([name, value]) => sql`${expression(value)} as ${sql.id(name)}`);
  return sql`(select row_to_json(o) from (select ${sql.join(columns)}) o)`;
}

/** The values of a one-column query (JSON values, in the query's order) as one compact JSON array; `[]` when it has no rows. */
export function jsonArray(rows: Expression<unknown>): RawBuilder<unknown> {
  return sql`array_to_json(array(${rows}))`;
}

/**
 * The lines of an export's file whose ids are in (`afterId`, `throughId`] (to the end when
 * `throughId` is null), from `{ id, json }` rows (each `json` the text its GET answers): how many,
 * the last id, and the lines' UTF-8 bytes, each ending with a newline, in id order. Read row by
 * row and written into one buffer: each row's text is small and short-lived (the young
 * generation's to collect), where one text of the whole batch would sit in V8's old space until a
 * major collection.
 */
export async function jsonLineRange(
  db: QueryExecutorProvider,
  rows: Expression<{ id: number; json: string }>,
  afterId: number,
  throughId: number | null,
): Promise<{ count: number; lastId: number; lines: Buffer }> {
  const { rows: batch } = await sql<{ id: number; json: string }>`
    select b.id, b.json from (${rows}) b
    where b.id > ${afterId}${throughId === null ? sql`` : sql` and b.id <= ${throughId}`}
    order by b.id`.execute(db);
  let size = 0;
  for (const row of batch) size += Buffer.byteLength(row.json) + 1;
  const lines = Buffer.allocUnsafe(size);
  let at = 0;
  for (const row of batch) {
    at += lines.write(row.json, at);
    lines[at++] = 0x0a;
  }
  return { count: batch.length, lastId: batch.at(-1)?.id ?? 0, lines };
}

/**
 * Every `every`-th id of `rows`, ascending: where the batches of an export end, so they can be
 * read apart (and at once). Only the ids are read: the rows' other columns are never computed.
 */
export async function batchEnds(db: QueryExecutorProvider, rows: Expression<{ id: number }>, every: number): Promise<number[]> {
  const { rows: ends } = await sql<{ id: number }>`
    select w.id from (select b.id, row_number() over (order by b.id) as n from (${rows}) b) w
    where w.n % ${every} = 0
    order by w.id`.execute(db);
  return ends.map((e) => e.id);
}
