import { inTransaction } from '@erp/db';
import { sql, type Kysely } from 'kysely';
import { INVENTORY_SCHEMA, type InventoryDb } from './tables';

export async function insertSucursal(db: Kysely<InventoryDb>, empresaId: number, nombre: string, activo: boolean): Promise<number> {
  const row = await db.insertInto('sucursales').values({ empresa_id: empresaId, nombre, activo }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** A warehouse in a branch of the same company; undefined when the branch is not the company's. */
export async function insertBodega(
  db: Kysely<InventoryDb>,
  empresaId: number,
  sucursalId: number,
  nombre: string,
  activo: boolean,
): Promise<number | undefined> {
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

/** A place stock is kept in, named by its table: a branch (`sucursales`) or a warehouse of one (`bodegas`). */
export type Lugar = 'sucursales' | 'bodegas';

/**
 * Activates or deactivates a branch or a warehouse, and marks its stock entries as owed a count
 * (`countInventarios`); undefined when the company has none with that id. Only the place's row
 * changes here. The mark (this transaction's id) is cleared by whoever finishes the count.
 */
export async function markLugarActive(
  db: Kysely<InventoryDb>,
  table: Lugar,
  empresaId: number,
  id: number,
  activo: boolean,
): Promise<number | undefined> {
  const row = await db
    .updateTable(table)
    .set({ activo, updated_at: sql<Date>`now()`, conteo_pendiente: sql<number>`txid_current()` })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .returning('conteo_pendiente')
    .executeTakeFirst();
  return row?.conteo_pendiente ?? undefined;
}

/** Clears the mark of a finished count, unless a later change of the place marked it again. */
export async function clearConteoPendiente(db: Kysely<InventoryDb>, table: Lugar, id: number, mark: number): Promise<void> {
  await db.updateTable(table).set({ conteo_pendiente: null }).where('id', '=', id).where('conteo_pendiente', '=', mark).execute();
}

/** Places of every company whose count was left unfinished (the process stopped during it). */
export async function findConteosPendientes(
  db: Kysely<InventoryDb>,
): Promise<Array<{ table: Lugar; empresaId: number; id: number; mark: number }>> {
  const [sucursales, bodegas] = await Promise.all(
    (['sucursales', 'bodegas'] as const).map((table) =>
      db
        .selectFrom(table)
        .select(['empresa_id', 'id', 'conteo_pendiente'])
        .where('conteo_pendiente', 'is not', null)
        .orderBy('id')
        .execute(),
    ),
  );
  return [
    ...sucursales!.map((r) => ({ table: 'sucursales' as const, empresaId: r.empresa_id, id: r.id, mark: r.conteo_pendiente! })),
    ...bodegas!.map((r) => ({ table: 'bodegas' as const, empresaId: r.empresa_id, id: r.id, mark: r.conteo_pendiente! })),
  ];
}

/** The warehouses a change of the place reaches: the warehouse itself, or every warehouse of the branch. */
export async function bodegaIdsOf(db: Kysely<InventoryDb>, table: Lugar, empresaId: number, id: number): Promise<number[]> {
  if (table === 'bodegas') return [id];
  const rows = await db
    .selectFrom('bodegas')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('sucursal_id', '=', id)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Brings the next `limit` stock entries (by id, after `after`) of the warehouses in or out of their
 * products as their places now say, in one short transaction (migration 0006). Returns the last
 * entry id looked at, or null when no entry is left after `after`.
 */
export async function countInventarios(
  db: Kysely<InventoryDb>,
  empresaId: number,
  bodegaIds: readonly number[],
  after: number,
  limit: number,
): Promise<number | null> {
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<{
      hasta: number | null;
    }>`select ${sql.id(INVENTORY_SCHEMA, 'inventarios_contar')}(${empresaId}::integer, ${sql.val(bodegaIds)}::integer[], ${after}::integer, ${limit}::integer) as hasta`.execute(
      trx,
    );
    return rows[0]!.hasta;
  });
}
