import type { Kysely } from 'kysely';

/**
 * The key a return registered with its sale under (`sales.sale.return.register`) before it
 * committed, so the sales service can ask which registrations became returns. Null on returns
 * made before registration existed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('devoluciones').addColumn('clave_registro', 'text').execute();
}
