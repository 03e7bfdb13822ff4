import type { Bus } from '@erp/bus';
import { inventorySubjects, type ReplyOf, type RequestContext, type RequestOf } from '@erp/contracts';

type Req<S extends keyof typeof inventorySubjects> = RequestOf<typeof inventorySubjects, S>;
type Reply<S extends keyof typeof inventorySubjects> = ReplyOf<typeof inventorySubjects, S>;

/** What the returns flows ask of inventory. */
export interface InventoryPort {
  /** The products of the given ids (a return keeps their brands, which sale lines do not). */
  resolve(ctx: RequestContext, req: Req<'inventory.product.resolve'>): Promise<Reply<'inventory.product.resolve'>>;
  /** Moves stock under `clave`, applied once however often it is sent. */
  adjust(ctx: RequestContext, req: Req<'inventory.stock.adjust'>): Promise<Reply<'inventory.stock.adjust'>>;
}

export function busInventory(bus: Bus): InventoryPort {
  return {
    resolve: (ctx, req) => bus.request(inventorySubjects, 'inventory.product.resolve', req, ctx),
    adjust: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.adjust', req, ctx),
  };
}
