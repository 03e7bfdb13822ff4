import type { Kysely } from 'kysely';

/**
 * What the sale's active returns add up to, kept by the consumer of the returns service's events:
 * `monto_devuelto` is the sum of their totals and `devoluciones_activas` how many there are. The
 * stored `saldo` stays what the sale left owing; the sale is read with
 * `greatest(saldo - monto_devuelto, 0)`, so annulling a return gives the balance back.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('ventas')
    .addColumn('monto_devuelto', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('devoluciones_activas', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
