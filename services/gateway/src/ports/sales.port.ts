import type { Bus } from '@erp/bus';
import { salesApiSubjects, type ReplyOf, type RequestOf, type TenantContext } from '@erp/contracts';

type Req<S extends keyof typeof salesApiSubjects> = RequestOf<typeof salesApiSubjects, S>;
type Reply<S extends keyof typeof salesApiSubjects> = ReplyOf<typeof salesApiSubjects, S>;

/** What the gateway's flows ask of sales (its routes map one request each onto the catalog: see http/routes). */
export interface SalesPort {
  /** Creates the batch's sales in order, answering a prefix of them within sales' time budget. */
  createBatch(ctx: TenantContext, req: Req<'sales.batch.create'>): Promise<Reply<'sales.batch.create'>>;
}

export function busSales(bus: Bus): SalesPort {
  return {
    createBatch: (ctx, req) => bus.request(salesApiSubjects, 'sales.batch.create', req, ctx),
  };
}
