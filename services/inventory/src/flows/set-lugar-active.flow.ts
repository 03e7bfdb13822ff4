import type { Kysely } from 'kysely';
import {
  bodegaIdsOf,
  clearConteoPendiente,
  countInventarios,
  findConteosPendientes,
  markLugarActive,
  type Lugar,
} from '../db/lugar.repository';
import type { InventoryDb } from '../db/tables';

/**
 * (De)activates a branch or a warehouse, then moves its stock entries in or out of their products
 * a batch at a time, each batch its own short transaction: no product stays locked while the
 * others are moved. The reply waits for the last batch, so the summary counts the place as it now
 * is. A count cut short (the process stopped) is finished by `finishConteosPendientes` at the next
 * start, or by calling this again: the batches only flip what differs.
 * False when the company has no such place.
 */
export async function setLugarActive(
  db: Kysely<InventoryDb>,
  lugar: { table: Lugar; empresaId: number; id: number; activo: boolean },
  batchSize: number,
): Promise<boolean> {
  const mark = await markLugarActive(db, lugar.table, lugar.empresaId, lugar.id, lugar.activo);
  if (mark === undefined) return false;
  await countLugar(db, { ...lugar, mark }, batchSize);
  return true;
}

/** Finishes the counts of every place whose last change was not counted to the end. */
export async function finishConteosPendientes(db: Kysely<InventoryDb>, batchSize: number): Promise<number> {
  const pendientes = await findConteosPendientes(db);
  for (const lugar of pendientes) await countLugar(db, lugar, batchSize);
  return pendientes.length;
}

async function countLugar(
  db: Kysely<InventoryDb>,
  lugar: { table: Lugar; empresaId: number; id: number; mark: number },
  batchSize: number,
): Promise<void> {
  const bodegaIds = await bodegaIdsOf(db, lugar.table, lugar.empresaId, lugar.id);
  if (bodegaIds.length > 0) {
    for (let after: number | null = 0; after !== null;) after = await countInventarios(db, lugar.empresaId, bodegaIds, after, batchSize);
  }
  await clearConteoPendiente(db, lugar.table, lugar.id, lugar.mark);
}
