import type { Bus } from '@erp/bus';
import { inventorySubjects, type ReplyOf, type RequestOf, type TenantContext } from '@erp/contracts';

type Req<S extends keyof typeof inventorySubjects> = RequestOf<typeof inventorySubjects, S>;
type Reply<S extends keyof typeof inventorySubjects> = ReplyOf<typeof inventorySubjects, S>;

/** What package imports ask of inventory. */
export interface InventoryPort {
  /** The branch each item names (by id or name), one answer per item in order. */
  resolveSucursal(ctx: TenantContext, req: Req<'inventory.sucursal.resolve'>): Promise<Reply<'inventory.sucursal.resolve'>>;
}

export function busInventory(bus: Bus): InventoryPort {
  return {
    resolveSucursal: (ctx, req) => bus.request(inventorySubjects, 'inventory.sucursal.resolve', req, ctx),
  };
}
