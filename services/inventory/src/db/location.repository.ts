import { inTransaction } from '@erp/db';
import { sql, type Kysely } from 'kysely';
import { INVENTORY_SCHEMA, type InventoryDb } from './tables';

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
 * Only the place's row changes here: its stock entries follow with `countInventarios`.
 */
export async function setActive(db: Kysely<InventoryDb>, table: 'sucursales' | 'bodegas', empresaId: number, id: number, activo: boolean): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ activo, updated_at: sql<Date>`now()` })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The warehouses a change of the place reaches: the warehouse itself, or every warehouse of the branch. */
export async function bodegaIdsOf(db: Kysely<InventoryDb>, table: 'sucursales' | 'bodegas', empresaId: number, id: number): Promise<number[]> {
  if (table === 'bodegas') return [id];
  const rows = await db.selectFrom('bodegas').select('id').where('empresa_id', '=', empresaId).where('sucursal_id', '=', id).orderBy('id').execute();
  return rows.map((r) => r.id);
}

/**
 * Brings the next `limit` stock entries (by id, after `after`) of the warehouses in or out of their
 * products as their places now say, in one short transaction (migration 0006). Returns the last
 * entry id looked at, or null when no entry is left after `after`.
 */
export async function countInventarios(db: Kysely<InventoryDb>, empresaId: number, bodegaIds: readonly number[], after: number, limit: number): Promise<number | null> {
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<{ hasta: number | null }>`select ${sql.id(INVENTORY_SCHEMA, 'inventarios_contar')}(${empresaId}::integer, ${sql.val(bodegaIds)}::integer[], ${after}::integer, ${limit}::integer) as hasta`.execute(trx);
    return rows[0]!.hasta;
  });
}
