import { sql, type Kysely } from 'kysely';

/**
 * The answers of requests sent with an `Idempotency-Key`, per company and key: the fingerprint of
 * the request (method, path, query and body), and once it has been answered its status, body and
 * the headers a replay repeats. A row without a status is a request still running. Kept 24 hours
 * (`created_at`), then purged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotencia')
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('clave', 'text', (c) => c.notNull())
    .addColumn('huella', 'text', (c) => c.notNull())
    .addColumn('status', 'smallint')
    .addColumn('cuerpo', 'bytea')
    .addColumn('cabeceras', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotencia_pkey', ['empresa_id', 'clave'])
    .execute();
  await db.schema.createIndex('idempotencia_created_at_idx').on('idempotencia').column('created_at').execute();
}
