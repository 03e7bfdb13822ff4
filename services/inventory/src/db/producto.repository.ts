import { sql, type Transaction } from 'kysely';
import type { InventoryDb, ProductosTable } from './tables';

/** The company's category of that name, created when missing. */
export async function categoriaIdFor(trx: Transaction<InventoryDb>, empresaId: number, nombre: string): Promise<number> {
  const row = await trx
    .insertInto('categorias')
    .values({ empresa_id: empresaId, nombre })
    .onConflict((oc) => oc.columns(['empresa_id', 'nombre']).doUpdateSet({ nombre }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

type NewProducto = Omit<
  ProductosTable,
  'id' | 'empresa_id' | 'enable' | 'created_at' | 'updated_at' | 'deleted_at' | 'stock_activo' | 'bodegas_con_stock' | 'bodegas_stock_bajo'
> & { enable: boolean };

/**
 * Inserts a product unless a live one of the company has its `codigo`; undefined when it does
 * (a concurrent insert of the same code waits for the first and then does nothing).
 */
export async function insertProducto(trx: Transaction<InventoryDb>, empresaId: number, producto: NewProducto): Promise<number | undefined> {
  const row = await trx
    .insertInto('productos')
    .values({ ...producto, empresa_id: empresaId, deleted_at: null })
    .onConflict((oc) => oc.columns(['empresa_id', 'codigo']).where('deleted_at', 'is', null).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export async function findLiveProductoId(trx: Transaction<InventoryDb>, empresaId: number, codigo: string): Promise<number | undefined> {
  const row = await trx
    .selectFrom('productos')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('codigo', '=', codigo)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.id;
}

export type ProductoChanges = Partial<Omit<NewProducto, 'tipo'>>;

/** Applies the changes to a live product of the company; false when there is none. */
export async function updateProducto(
  trx: Transaction<InventoryDb>,
  empresaId: number,
  id: number,
  changes: ProductoChanges,
): Promise<boolean> {
  const result = await trx
    .updateTable('productos')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
