import type { ParsedRequestOf, TenantContext, inventorySubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';
import { revertAjuste } from '../flows/revert-ajuste.flow';

type RevertRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.stock.revert'>;

export function revertAdjustmentHandler(db: Kysely<InventoryDb>) {
  return async (req: RevertRequest, ctx: TenantContext) => inTransaction(db, (trx) => revertAjuste(trx, req, ctx.empresa.id));
}
