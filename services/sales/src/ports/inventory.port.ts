import type { Bus } from '@erp/bus';
import { inventorySubjects, type ReplyOf, type RequestOf, type TenantContext } from '@erp/contracts';

type Req<S extends keyof typeof inventorySubjects> = RequestOf<typeof inventorySubjects, S>;
type Reply<S extends keyof typeof inventorySubjects> = ReplyOf<typeof inventorySubjects, S>;

/** What the sales flows ask of inventory. */
export interface InventoryPort {
  resolve(ctx: TenantContext, req: Req<'inventory.product.resolve'>): Promise<Reply<'inventory.product.resolve'>>;
  resolveSucursal(ctx: TenantContext, req: Req<'inventory.sucursal.resolve'>): Promise<Reply<'inventory.sucursal.resolve'>>;
  reserve(ctx: TenantContext, req: Req<'inventory.stock.reserve'>): Promise<unknown>;
  /** Reservations of many sales, decided in order; one refused is its result. */
  reserveMany(ctx: TenantContext, req: Req<'inventory.stock.reserve-many'>): Promise<Reply<'inventory.stock.reserve-many'>>;
  release(ctx: TenantContext, req: Req<'inventory.stock.release'>): Promise<unknown>;
  adjust(ctx: TenantContext, req: Req<'inventory.stock.adjust'>): Promise<Reply<'inventory.stock.adjust'>>;
  revert(ctx: TenantContext, req: Req<'inventory.stock.revert'>): Promise<Reply<'inventory.stock.revert'>>;
}

export function busInventory(bus: Bus): InventoryPort {
  return {
    resolve: (ctx, req) => bus.request(inventorySubjects, 'inventory.product.resolve', req, ctx),
    resolveSucursal: (ctx, req) => bus.request(inventorySubjects, 'inventory.sucursal.resolve', req, ctx),
    reserve: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.reserve', req, ctx),
    reserveMany: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.reserve-many', req, ctx),
    release: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.release', req, ctx),
    adjust: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.adjust', req, ctx),
    revert: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.revert', req, ctx),
  };
}
