import { sql, type Kysely } from 'kysely';

/**
 * The files of the exports: one row per attempt, written before its owner is asked to put the file,
 * so the files no job points to are found from here instead of by listing the store (which takes a
 * consumer, and a service may create none).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('archivos')
    .addColumn('objeto', 'text', (c) => c.primaryKey())
    .addColumn('exportacion_id', 'integer', (c) => c.notNull().references('exportaciones.id'))
    .addColumn('intento', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('archivos_exportacion_idx').on('archivos').column('exportacion_id').execute();
  // Every attempt of the jobs made before this table, named as the attempts named their files then,
  // so a file the previous release left to its store listing is still found; dated from the job's
  // start, which no attempt precedes.
  await sql`
    insert into archivos (objeto, exportacion_id, intento, created_at)
    select format('empresa-%s.exportacion-%s.intento-%s.ndjson.gz', e.empresa_id, e.id, n), e.id, n, coalesce(e.iniciada, e.created_at)
      from exportaciones e
     cross join generate_series(1, e.intento) as n`.execute(db);
}
