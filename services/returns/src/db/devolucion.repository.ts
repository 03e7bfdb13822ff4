import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { DevolucionDetallesTable, DevolucionesTable, ReturnsDb } from './tables';

type Db = Kysely<ReturnsDb> | Transaction<ReturnsDb>;

export const REFERENCIA_INDEX = 'devoluciones_empresa_referencia_key';

/**
 * Serialises the returns of one sale for the rest of the transaction: what active returns already
 * took is read after the lock, so concurrent returns of a sale cannot together exceed what was sold.
 */
export async function lockVentaDevoluciones(trx: Transaction<ReturnsDb>, empresaId: number, ventaId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`devoluciones:${empresaId}:${ventaId}`}, 0))`.execute(trx);
}

/** The lock of `lockVentaDevoluciones` if no transaction holds it: false while a return of the sale is being made. */
export async function tryLockVentaDevoluciones(trx: Transaction<ReturnsDb>, empresaId: number, ventaId: number): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_xact_lock(hashtextextended(${`devoluciones:${empresaId}:${ventaId}`}, 0)) as locked`.execute(trx);
  return rows[0]!.locked;
}

export async function insertDevolucion(trx: Transaction<ReturnsDb>, devolucion: Insertable<DevolucionesTable>): Promise<number> {
  const row = await trx.insertInto('devoluciones').values(devolucion).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function insertDetalles(trx: Transaction<ReturnsDb>, detalles: Insertable<DevolucionDetallesTable>[]): Promise<void> {
  if (detalles.length > 0) await trx.insertInto('devolucion_detalles').values(detalles).execute();
}

/** The return's row locked for its annulment. */
export async function lockDevolucion(trx: Transaction<ReturnsDb>, empresaId: number, id: number) {
  return trx
    .selectFrom('devoluciones')
    .select(['id', 'venta_id', 'enable', 'total'])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function annulDevolucion(trx: Transaction<ReturnsDb>, id: number): Promise<void> {
  const now = new Date();
  await trx.updateTable('devoluciones').set({ enable: false, anulada_at: now, updated_at: now }).where('id', '=', id).execute();
}

export async function markStock(db: Db, id: number, column: 'stock_aplicado_at' | 'stock_revertido_at'): Promise<void> {
  await db
    .updateTable('devoluciones')
    .set({ [column]: new Date() })
    .where('id', '=', id)
    .where(column, 'is', null)
    .execute();
}
