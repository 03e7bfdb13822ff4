import type { Kysely } from 'kysely';
import {
  bodegaIdsOf,
  clearConteoPendiente,
  countInventarios,
  findConteosPendientes,
  setLugarActive,
  type Lugar,
} from '../db/lugar.repository';
import type { InventoryDb } from '../db/tables';

/**
 * (De)activates a branch or a warehouse, then moves its stock entries in or out of their products
 * a batch at a time, each batch its own short transaction: no product stays locked while the
 * others are moved. The reply waits for the last batch, so the summary counts the place as it now
 * is. A count cut short (the process stopped) is finished by `finishPendingCounts` at the next
 * start, or by calling this again: the batches only flip what differs.
 * False when the company has no such place.
 */
export async function setLocationActive(
  db: Kysely<InventoryDb>,
  place: { table: Lugar; empresaId: number; id: number; activo: boolean },
  batchSize: number,
): Promise<boolean> {
  const mark = await setLugarActive(db, place.table, place.empresaId, place.id, place.activo);
  if (mark === undefined) return false;
  await countPlace(db, { ...place, mark }, batchSize);
  return true;
}

/** Finishes the counts of every place whose last change was not counted to the end. */
export async function finishPendingCounts(db: Kysely<InventoryDb>, batchSize: number): Promise<number> {
  const pending = await findConteosPendientes(db);
  for (const place of pending) await countPlace(db, place, batchSize);
  return pending.length;
}

async function countPlace(
  db: Kysely<InventoryDb>,
  place: { table: Lugar; empresaId: number; id: number; mark: number },
  batchSize: number,
): Promise<void> {
  const bodegaIds = await bodegaIdsOf(db, place.table, place.empresaId, place.id);
  if (bodegaIds.length > 0) {
    for (let after: number | null = 0; after !== null;) after = await countInventarios(db, place.empresaId, bodegaIds, after, batchSize);
  }
  await clearConteoPendiente(db, place.table, place.id, place.mark);
}
