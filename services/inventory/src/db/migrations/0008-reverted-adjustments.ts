import type { Kysely } from 'kysely';

/** An adjustment reverted because its caller never recorded it (see `inventory.stock.revert`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ajustes').addColumn('revertido_at', 'timestamptz').execute();
}
