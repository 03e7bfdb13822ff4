import { sql, type Kysely } from 'kysely';

/**
 * A customer's identity or tax document number, so `GET /customers?q=` finds a customer by it as
 * partners know them. Nullable: the customers stored before it have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clientes add column numero_documento text`.execute(db);
}
