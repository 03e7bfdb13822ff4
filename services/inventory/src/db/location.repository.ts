import { inTransaction } from '@erp/db';
import { sql, type Kysely } from 'kysely';
import type { InventoryDb } from './tables';

export async function insertSucursal(db: Kysely<InventoryDb>, empresaId: number, nombre: string, activo: boolean): Promise<number> {
  const row = await db.insertInto('sucursales').values({ empresa_id: empresaId, nombre, activo }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** A warehouse in a branch of the same company; undefined when the branch is not the company's. */
export async function insertBodega(db: Kysely<InventoryDb>, empresaId: number, sucursalId: number, nombre: string, activo: boolean): Promise<number | undefined> {
  const row = await db
    .insertInto('bodegas')
    .columns(['empresa_id', 'sucursal_id', 'nombre', 'activo'])
    .expression((eb) =>
      eb
        .selectFrom('sucursales')
        .select([sql.lit(empresaId).as('empresa_id'), 'id', sql.val(nombre).as('nombre'), sql.val(activo).as('activo')])
        .where('id', '=', sucursalId)
        .where('empresa_id', '=', empresaId),
    )
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

/**
 * Activates or deactivates a branch or a warehouse; false when the company has none with that id.
 * A warehouse's branch is share-locked first: the triggers that move the stock in or out lock a
 * branch before its warehouses, and a concurrent change of the branch must not lock the other way.
 */
export async function setActive(db: Kysely<InventoryDb>, table: 'sucursales' | 'bodegas', empresaId: number, id: number, activo: boolean): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    if (table === 'bodegas') {
      await trx
        .selectFrom('sucursales as s')
        .innerJoin('bodegas as b', 'b.sucursal_id', 's.id')
        .select('s.id')
        .where('b.id', '=', id)
        .where('b.empresa_id', '=', empresaId)
        .forShare('s')
        .execute();
    }
    const result = await trx
      .updateTable(table)
      .set({ activo, updated_at: sql<Date>`now()` })
      .where('empresa_id', '=', empresaId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  });
}
