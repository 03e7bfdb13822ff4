import type { Kysely } from 'kysely';

/**
 * The fingerprint of the request that created the sale (`huella`, see `huellaOf`): a retry with
 * its reference and the same body answers the sale, one with another body is refused. Sales
 * written before it keep `null` and their old answer (any retry gets the sale).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ventas').addColumn('huella', 'text').execute();
}
