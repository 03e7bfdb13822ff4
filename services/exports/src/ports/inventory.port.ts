import type { Bus, RequestOptions } from '@erp/bus';
import { inventoryExportSubjects, type ReplyOf, type RequestContext, type RequestOf, type TenantContext } from '@erp/contracts';

type Req<S extends keyof typeof inventoryExportSubjects> = RequestOf<typeof inventoryExportSubjects, S>;
type Reply<S extends keyof typeof inventoryExportSubjects> = ReplyOf<typeof inventoryExportSubjects, S>;

/** What the exports service asks of inventory, owner of the products it exports. */
export interface InventoryPort {
  /** Writes an attempt's file to the export store from one snapshot of the data. */
  writeExport(ctx: TenantContext, req: Req<'inventory.export.write'>, options?: RequestOptions): Promise<Reply<'inventory.export.write'>>;
  /** Removes a file of its export store; false when it had none. */
  removeExport(
    ctx: RequestContext,
    req: Req<'inventory.export.remove'>,
    options?: RequestOptions,
  ): Promise<Reply<'inventory.export.remove'>>;
}

export function busInventory(bus: Bus): InventoryPort {
  return {
    writeExport: (ctx, req, options) => bus.request(inventoryExportSubjects, 'inventory.export.write', req, ctx, options),
    removeExport: (ctx, req, options) => bus.request(inventoryExportSubjects, 'inventory.export.remove', req, ctx, options),
  };
}
