import { sql, type Kysely } from 'kysely';

/**
 * Every platform order looks its customer up by email (`lower(email)` within the company). Without
 * an index on it each lookup read all of the company's customers (10,000 of them in a company with
 * a million sales), once per order.
 *
 * Built in the migration's transaction, as 0008: writes to clientes wait while it builds.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index clientes_empresa_email_idx on clientes (empresa_id, lower(email))`.execute(db);
}
