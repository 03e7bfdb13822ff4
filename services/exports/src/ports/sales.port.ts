import type { Bus, RequestOptions } from '@erp/bus';
import { salesExportSubjects, type ReplyOf, type RequestContext, type RequestOf, type TenantContext } from '@erp/contracts';

type Req<S extends keyof typeof salesExportSubjects> = RequestOf<typeof salesExportSubjects, S>;
type Reply<S extends keyof typeof salesExportSubjects> = ReplyOf<typeof salesExportSubjects, S>;

/** What the exports service asks of sales, owner of the sales it exports. */
export interface SalesPort {
  /** Writes an attempt's file to the export store from one snapshot of the data. */
  writeExport(ctx: TenantContext, req: Req<'sales.export.write'>, options?: RequestOptions): Promise<Reply<'sales.export.write'>>;
  /** Removes a file of its export store; false when it had none. */
  removeExport(ctx: RequestContext, req: Req<'sales.export.remove'>, options?: RequestOptions): Promise<Reply<'sales.export.remove'>>;
}

export function busSales(bus: Bus): SalesPort {
  return {
    writeExport: (ctx, req, options) => bus.request(salesExportSubjects, 'sales.export.write', req, ctx, options),
    removeExport: (ctx, req, options) => bus.request(salesExportSubjects, 'sales.export.remove', req, ctx, options),
  };
}
