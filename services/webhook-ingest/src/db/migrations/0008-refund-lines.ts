import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // An order with a refund whose lines are still to come (a WooCommerce webhook carries only the
  // refund's amount): reconciliation reads it again, with its refunds' lines, until none is left.
  await db.schema
    .alterTable('pedidos')
    .addColumn('lineas_pendientes', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}
