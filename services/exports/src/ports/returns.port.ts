import type { Bus, RequestOptions } from '@erp/bus';
import { returnsExportSubjects, type ReplyOf, type RequestContext, type RequestOf, type TenantContext } from '@erp/contracts';

type Req<S extends keyof typeof returnsExportSubjects> = RequestOf<typeof returnsExportSubjects, S>;
type Reply<S extends keyof typeof returnsExportSubjects> = ReplyOf<typeof returnsExportSubjects, S>;

/** What the exports service asks of the returns service, owner of the returns it exports. */
export interface ReturnsPort {
  /** Writes an attempt's file to the export store from one snapshot of the data. */
  writeExport(ctx: TenantContext, req: Req<'returns.export.write'>, options?: RequestOptions): Promise<Reply<'returns.export.write'>>;
  /** Removes a file of its export store; false when it had none. */
  removeExport(ctx: RequestContext, req: Req<'returns.export.remove'>, options?: RequestOptions): Promise<Reply<'returns.export.remove'>>;
}

export function busReturns(bus: Bus): ReturnsPort {
  return {
    writeExport: (ctx, req, options) => bus.request(returnsExportSubjects, 'returns.export.write', req, ctx, options),
    removeExport: (ctx, req, options) => bus.request(returnsExportSubjects, 'returns.export.remove', req, ctx, options),
  };
}
