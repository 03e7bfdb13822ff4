import type { Kysely } from 'kysely';
import { bodegaIdsOf, countInventarios, setActive } from '../db/location.repository';
import type { InventoryDb } from '../db/tables';

/**
 * (De)activates a branch or a warehouse, then moves its stock entries in or out of their products
 * a batch at a time, each batch its own short transaction: no product stays locked while the
 * others are moved. The reply waits for the last batch, so the summary counts the place as it now
 * is; a call cut short is finished by calling it again (the batches only flip what differs).
 * False when the company has no such place.
 */
export async function setLocationActive(
  db: Kysely<InventoryDb>,
  place: { table: 'sucursales' | 'bodegas'; empresaId: number; id: number; activo: boolean },
  batchSize: number,
): Promise<boolean> {
  if (!(await setActive(db, place.table, place.empresaId, place.id, place.activo))) return false;
  const bodegaIds = await bodegaIdsOf(db, place.table, place.empresaId, place.id);
  if (bodegaIds.length === 0) return true;
  for (let after: number | null = 0; after !== null; ) after = await countInventarios(db, place.empresaId, bodegaIds, after, batchSize);
  return true;
}
