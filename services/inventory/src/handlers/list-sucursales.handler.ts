import type { Branch, TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { listSucursalesConBodegas } from '../db/lugar-list.repository';
import type { InventoryDb } from '../db/tables';

/** `GET /branches`: the active branches with their active warehouses, the places a sale can name. */
export function listSucursalesHandler(db: Kysely<InventoryDb>) {
  return async (_request: Record<string, never>, ctx: TenantContext): Promise<Branch[]> => listSucursalesConBodegas(db, ctx.empresa.id);
}
