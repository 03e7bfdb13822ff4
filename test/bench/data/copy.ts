import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { ProgressStep } from './progress';

/** A value of one COPY column: null is SQL NULL; strings are escaped for the text format. */
export type CopyValue = string | number | boolean | null;

const NEEDS_ESCAPE = /[\\\t\n\r]/;

function encode(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return NEEDS_ESCAPE.test(value) ? value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r') : value;
}

/** Rows per chunk written to the COPY stream: large enough to keep Postgres busy, small enough for a smooth bar. */
const CHUNK_ROWS = 2_000;

/**
 * Streams rows into `schema.table` with `COPY … FROM STDIN` (text format), respecting the
 * stream's back-pressure, and reports each chunk to the progress step. Returns the row count.
 */
export async function copyRows(
  client: pg.ClientBase,
  schema: string,
  table: string,
  columns: readonly string[],
  rows: Iterable<readonly CopyValue[]> | AsyncIterable<readonly CopyValue[]>,
  progress?: ProgressStep,
): Promise<number> {
  let count = 0;
  async function* chunks(): AsyncGenerator<string> {
    let lines: string[] = [];
    for await (const row of rows) {
      if (row.length !== columns.length)
        throw new Error(`${schema}.${table}: a row has ${row.length} values for ${columns.length} columns`);
      lines.push(row.map(encode).join('\t'));
      if (lines.length === CHUNK_ROWS) {
        count += lines.length;
        progress?.add(lines.length);
        yield `${lines.join('\n')}\n`;
        lines = [];
      }
    }
    if (lines.length > 0) {
      count += lines.length;
      progress?.add(lines.length);
      yield `${lines.join('\n')}\n`;
    }
  }
  const target = `${quoteIdent(schema)}.${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')})`;
  await pipeline(Readable.from(chunks()), client.query(copyFrom(`copy ${target} from stdin`)));
  return count;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Drops the secondary indexes and foreign keys of the tables about to be bulk-loaded and returns
 * what rebuilds them: one sort per index after the load is several times faster than keeping
 * every index current row by row, and re-adding a foreign key validates it in one pass. Primary
 * keys and unique constraints stay, so the load still fails on a duplicate. Rebuilding a unique
 * index also re-checks its rule on the loaded data.
 */
export async function deferIndexes(
  client: pg.ClientBase,
  schema: string,
  tables: readonly string[],
): Promise<{ count: number; restore: (progress?: ProgressStep) => Promise<void> }> {
  const { rows: indexes } = await client.query<{ name: string; def: string }>(
    `select ic.relname as name, pg_get_indexdef(i.indexrelid) as def
       from pg_index i
       join pg_class c on c.oid = i.indrelid
       join pg_class ic on ic.oid = i.indexrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relname = any($2) and not i.indisprimary
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
      order by ic.relname`,
    [schema, tables],
  );
  const { rows: foreignKeys } = await client.query<{ table: string; name: string; def: string }>(
    `select c.relname as table, k.conname as name, pg_get_constraintdef(k.oid) as def
       from pg_constraint k
       join pg_class c on c.oid = k.conrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relname = any($2) and k.contype = 'f'
      order by k.conname`,
    [schema, tables],
  );
  for (const fk of foreignKeys)
    await client.query(`alter table ${quoteIdent(schema)}.${quoteIdent(fk.table)} drop constraint ${quoteIdent(fk.name)}`);
  for (const index of indexes) await client.query(`drop index ${quoteIdent(schema)}.${quoteIdent(index.name)}`);
  return {
    count: indexes.length + foreignKeys.length,
    restore: async (progress) => {
      for (const index of indexes) {
        await client.query(index.def);
        progress?.add(1);
      }
      for (const fk of foreignKeys) {
        await client.query(`alter table ${quoteIdent(schema)}.${quoteIdent(fk.table)} add constraint ${quoteIdent(fk.name)} ${fk.def}`);
        progress?.add(1);
      }
    },
  };
}

/**
 * Rows produced alongside another table's (a sale's lines), consumed by a second COPY on its own
 * connection so both tables load at once. Bounded: the producer waits in `room()` while the
 * consumer is `limit` rows behind, so memory stays flat at any scale.
 */
export class RowQueue implements AsyncIterable<CopyValue[]> {
  private rows: CopyValue[][] = [];
  private closed = false;
  private abandoned = false;
  private wakeConsumer: (() => void) | undefined;
  private wakeProducer: (() => void) | undefined;

  constructor(private readonly limit: number) {}

  push(row: CopyValue[]): void {
    if (this.abandoned) throw new Error('the COPY consuming these rows stopped');
    this.rows.push(row);
    this.wake('consumer');
  }

  async room(): Promise<void> {
    while (this.rows.length >= this.limit && !this.closed) await new Promise<void>((resolve) => (this.wakeProducer = resolve));
  }

  /** No more rows (also after a failure of the producer, so the consumer's COPY ends). */
  close(): void {
    this.closed = true;
    this.wake('consumer');
    this.wake('producer');
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<CopyValue[]> {
    try {
      for (;;) {
        if (this.rows.length > 0) {
          const batch = this.rows;
          this.rows = [];
          this.wake('producer');
          yield* batch;
        } else if (this.closed) return;
        else await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
      }
    } finally {
      // A consumer that stops (its COPY failed) must not leave the producer waiting for room.
      if (!this.closed) this.abandoned = true;
      this.closed = true;
      this.wake('producer');
    }
  }

  private wake(who: 'consumer' | 'producer'): void {
    const wake = who === 'consumer' ? this.wakeConsumer : this.wakeProducer;
    if (who === 'consumer') this.wakeConsumer = undefined;
    else this.wakeProducer = undefined;
    wake?.();
  }
}

/** Moves each identity sequence past the ids written explicitly, so the services' inserts continue after them. */
export async function syncIdentity(client: pg.ClientBase, schema: string, table: string, column = 'id'): Promise<void> {
  const qualified = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  await client.query(
    `select setval(pg_get_serial_sequence($1, $2), coalesce((select max(${quoteIdent(column)}) from ${qualified}), 0) + 1, false)`,
    [qualified, column],
  );
}

/** The next free id of a table: loaders write ids themselves so related rows need no round trip. */
export async function nextId(client: pg.ClientBase, schema: string, table: string): Promise<number> {
  const { rows } = await client.query<{ next: number }>(
    `select coalesce(max(id), 0)::int + 1 as next from ${quoteIdent(schema)}.${quoteIdent(table)}`,
  );
  return rows[0]!.next;
}
