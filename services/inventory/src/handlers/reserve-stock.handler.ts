import type { ParsedRequestOf, TenantContext, inventorySubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';
import { reserveStock } from '../flows/reservas.flow';

type ReserveRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.stock.reserve'>;

export function reserveStockHandler(db: Kysely<InventoryDb>, options: { checkAfterMs: number }) {
  return async (req: ReserveRequest, ctx: TenantContext) =>
    inTransaction(db, (trx) =>
      reserveStock(trx, req, { empresaId: ctx.empresa.id, allowNegative: ctx.empresa.venderSinStock, checkAfterMs: options.checkAfterMs }),
    );
}
