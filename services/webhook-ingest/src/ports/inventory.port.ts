import type { Bus } from '@erp/bus';
import { inventorySubjects, type ReplyOf, type RequestOf, type TenantContext } from '@erp/contracts';

/** What product updates need of the inventory's catalog besides stock. */
export interface CatalogPort {
  updateProducto(ctx: TenantContext, id: number, changes: { nombre?: string; precio?: string; enable?: 0 | 1 }): Promise<void>;
  createProducto(
    ctx: TenantContext,
    product: { codigo: string; nombre: string; precio: string; enable: 0 | 1; tipo?: 'Producto' | 'Servicio' },
  ): Promise<number>;
}

/** The catalog over the bus: `inventory.product.update` and `inventory.product.create`. */
export function busCatalog(bus: Bus): CatalogPort {
  return {
    updateProducto: async (ctx, id, cambios) => {
      await bus.request(inventorySubjects, 'inventory.product.update', { id, cambios }, ctx);
    },
    // A code that exists already answers its product, so a replayed creation makes no second one.
    createProducto: async (ctx, product) => (await bus.request(inventorySubjects, 'inventory.product.create', product, ctx)).id,
  };
}

type ResolveRequest = RequestOf<typeof inventorySubjects, 'inventory.product.resolve'>;
type AdjustRequest = RequestOf<typeof inventorySubjects, 'inventory.stock.adjust'>;

/** What order and refund processing need of the inventory's stock. */
export interface InventoryPort {
  resolve(ctx: TenantContext, req: ResolveRequest): Promise<ReplyOf<typeof inventorySubjects, 'inventory.product.resolve'>>;
  adjust(ctx: TenantContext, req: AdjustRequest): Promise<ReplyOf<typeof inventorySubjects, 'inventory.stock.adjust'>>;
}

export function busInventory(bus: Bus): InventoryPort {
  return {
    resolve: (ctx, req) => bus.request(inventorySubjects, 'inventory.product.resolve', req, ctx),
    adjust: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.adjust', req, ctx),
  };
}
