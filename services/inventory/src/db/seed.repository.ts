import type { Insertable, Transaction } from 'kysely';
import type { InventoryDb } from './tables';

/** A product of a seed: its code must be new to the company (a repeated one fails the seed). */
export async function insertSeedProducto(trx: Transaction<InventoryDb>, producto: Insertable<InventoryDb['productos']>): Promise<number> {
  const { id } = await trx.insertInto('productos').values(producto).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function insertInventario(trx: Transaction<InventoryDb>, inventario: Insertable<InventoryDb['inventarios']>): Promise<void> {
  await trx.insertInto('inventarios').values(inventario).execute();
}

/** Ledger rows written as they are, a thousand per statement. */
export async function insertMovimientos(
  trx: Transaction<InventoryDb>,
  movimientos: readonly Insertable<InventoryDb['movimientos']>[],
): Promise<void> {
  for (let i = 0; i < movimientos.length; i += 1000)
    await trx
      .insertInto('movimientos')
      .values(movimientos.slice(i, i + 1000))
      .execute();
}
