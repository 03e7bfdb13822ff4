import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { millisecondsAgo } from '@erp/db';
import type { DevolucionesRegistradasTable, SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;
type EstadoRegistro = Selectable<DevolucionesRegistradasTable>['estado'];

/** The state of the registration under `clave`, its row locked; undefined when there is none. */
async function lockRegistro(db: Db, empresaId: number, clave: string): Promise<EstadoRegistro | undefined> {
  const row = await db
    .selectFrom('devoluciones_registradas')
    .select('estado')
    .where('empresa_id', '=', empresaId)
    .where('clave', '=', clave)
    .forUpdate()
    .executeTakeFirst();
  return row?.estado;
}

/** Registers a return's key with its sale (the caller holds the sale's row lock); a key already counted counts once. */
export async function registerDevolucion(trx: Transaction<SalesDb>, empresaId: number, ventaId: number, clave: string): Promise<void> {
  const existing = await lockRegistro(trx, empresaId, clave);
  if (existing && existing !== 'descartada') return;
  if (existing) {
    await trx
      .updateTable('devoluciones_registradas')
      .set({ estado: 'registrada', updated_at: new Date() })
      .where('empresa_id', '=', empresaId)
      .where('clave', '=', clave)
      .execute();
  } else {
    await trx
      .insertInto('devoluciones_registradas')
      .values({ empresa_id: empresaId, clave, venta_id: ventaId, id_devolucion: null })
      .execute();
  }
  await addDevolucionesActivas(trx, empresaId, ventaId, 1);
}

export async function addDevolucionesActivas(db: Db, empresaId: number, ventaId: number, delta: number): Promise<void> {
  await db
    .updateTable('ventas')
    .set({ devoluciones_activas: sql`devoluciones_activas + ${delta}`, updated_at: new Date() })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', ventaId)
    .execute();
}

/**
 * Adds a return's total to the sale's returned amount (`sign` -1 takes it off), and `activas` to
 * its count of active returns; false when the company has no such sale.
 */
export async function addMontoDevuelto(
  db: Db,
  empresaId: number,
  ventaId: number,
  sign: 1 | -1,
  total: string,
  activas: number,
): Promise<boolean> {
  const updated = await db
    .updateTable('ventas')
    .set({
      monto_devuelto: sql`monto_devuelto + ${sign} * ${total}::numeric`,
      ...(activas === 0 ? {} : { devoluciones_activas: sql`devoluciones_activas + ${activas}` }),
      updated_at: new Date(),
    })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', ventaId)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** How many active returns the sale counts (0 when the company has no such sale). */
export async function devolucionesActivasOf(db: Db, empresaId: number, ventaId: number): Promise<number> {
  const venta = await db
    .selectFrom('ventas')
    .select('devoluciones_activas')
    .where('empresa_id', '=', empresaId)
    .where('id', '=', ventaId)
    .executeTakeFirst();
  return venta?.devoluciones_activas ?? 0;
}

/** Keys of the sale's registrations not yet confirmed nor discarded. */
export async function pendingRegistros(db: Db, empresaId: number, ventaId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('devoluciones_registradas')
    .select('clave')
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', ventaId)
    .where('estado', '=', 'registrada')
    .execute();
  return rows.map((r) => r.clave);
}

/** Marks a registration as the committed return `idDevolucion`; answers its state before (undefined when there was none). */
export async function confirmRegistro(db: Db, empresaId: number, clave: string, idDevolucion: number): Promise<EstadoRegistro | undefined> {
  const before = await lockRegistro(db, empresaId, clave);
  if (!before) return undefined;
  await db
    .updateTable('devoluciones_registradas')
    .set({ estado: 'confirmada', id_devolucion: idDevolucion, updated_at: new Date() })
    .where('empresa_id', '=', empresaId)
    .where('clave', '=', clave)
    .execute();
  return before;
}

/** Discards a registration still pending; true when it was (so it no longer counts). */
export async function discardRegistro(db: Db, empresaId: number, clave: string): Promise<boolean> {
  const result = await db
    .updateTable('devoluciones_registradas')
    .set({ estado: 'descartada', updated_at: new Date() })
    .where('empresa_id', '=', empresaId)
    .where('clave', '=', clave)
    .where('estado', '=', 'registrada')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Sales with a registration still pending `olderThanMs` after it was last changed, oldest first. */
export async function ventasWithStaleRegistros(
  db: Db,
  olderThanMs: number,
  limit: number,
): Promise<Array<{ empresa_id: number; venta_id: number }>> {
  return db
    .selectFrom('devoluciones_registradas')
    .select(['empresa_id', 'venta_id'])
    .where('estado', '=', 'registrada')
    .where('updated_at', '<', millisecondsAgo(olderThanMs))
    .groupBy(['empresa_id', 'venta_id'])
    .orderBy(sql`min(updated_at)`)
    .limit(limit)
    .execute();
}
