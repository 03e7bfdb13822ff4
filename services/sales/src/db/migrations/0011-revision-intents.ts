import { sql, type Kysely } from 'kysely';

/**
 * Changes of a sale that may move its stock (an update, the annulment), recorded and committed
 * before their transaction and removed by it when it commits. One left behind is a change that
 * died, perhaps after inventory applied its stock revision: the revision sweeper squares the sale
 * (see docs/stock-revisions.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cambios_en_curso')
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('clave', 'uuid', (c) => c.notNull())
    .addColumn('venta_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('cambios_en_curso_pkey', ['empresa_id', 'clave'])
    .execute();
  await sql`create index cambios_en_curso_antiguedad on cambios_en_curso (created_at)`.execute(db);
}
