import type { ParsedRequestOf, TenantContext, inventorySubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';
import { adjustStock } from '../flows/adjust-stock.flow';

type AdjustRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.stock.adjust'>;

export function adjustStockHandler(db: Kysely<InventoryDb>) {
  return async (req: AdjustRequest, ctx: TenantContext) =>
    inTransaction(db, (trx) => adjustStock(trx, req, { empresaId: ctx.empresa.id, allowNegative: ctx.empresa.venderSinStock }));
}
