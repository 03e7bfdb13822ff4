import { sql, type Kysely } from 'kysely';

/**
 * Partner events received from the stream and not yet in the log. The consumer writes each here
 * as it is handled, in whatever order redeliveries bring them; they enter `eventos` (the feed's
 * positions, the deliveries owed) only once every earlier event of the stream has been handled,
 * in stream order (`orden`). A source event that comes back after a later one (its first handler
 * died, or its write failed and waits its retry) then still takes its place before the later one,
 * in the log and in the deliveries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('eventos_recibidos')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('tipo', 'text', (c) => c.notNull())
    .addColumn('recurso', 'text', (c) => c.notNull())
    .addColumn('orden', 'bigint', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('recibido_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index eventos_recibidos_orden_idx on eventos_recibidos (orden)`.execute(db);
}
