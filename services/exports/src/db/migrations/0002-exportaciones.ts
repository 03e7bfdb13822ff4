import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('exportaciones')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('recurso', 'text', (c) => c.notNull())
    .addColumn('filtros', 'jsonb', (c) => c.notNull())
    .addColumn('estado', 'text', (c) => c.notNull().defaultTo('en_cola'))
    // The request's context (company, user), given to the owning service when the file is written.
    .addColumn('contexto', 'jsonb', (c) => c.notNull())
    // Each attempt writes its own object; only the one that commits is pointed to by `objeto`.
    .addColumn('intento', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_hasta', 'timestamptz')
    .addColumn('objeto', 'text')
    .addColumn('objetos', 'integer')
    .addColumn('bytes', 'bigint')
    .addColumn('cursor', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('iniciada', 'timestamptz')
    .addColumn('completada', 'timestamptz')
    .addColumn('expira', 'timestamptz')
    .addCheckConstraint('exportaciones_estado_check', sql`estado in ('en_cola', 'procesando', 'completada', 'fallida', 'cancelada')`)
    .execute();
  await db.schema.createIndex('exportaciones_empresa_idx').on('exportaciones').columns(['empresa_id', 'id']).execute();
  // The worker's queue and the limit of running exports per company read only unfinished jobs.
  await db.schema
    .createIndex('exportaciones_en_curso_idx')
    .on('exportaciones')
    .columns(['estado', 'id'])
    .where(sql.ref('estado'), 'in', ['en_cola', 'procesando'])
    .execute();
  await db.schema
    .createIndex('exportaciones_expira_idx')
    .on('exportaciones')
    .column('expira')
    .where(sql.ref('objeto'), 'is not', null)
    .execute();
}
