import type { Bus, RequestOptions } from '@erp/bus';
import { salesSubjects, type ReplyOf, type RequestContext, type RequestOf } from '@erp/contracts';

type Req<S extends keyof typeof salesSubjects> = RequestOf<typeof salesSubjects, S>;
type Reply<S extends keyof typeof salesSubjects> = ReplyOf<typeof salesSubjects, S>;

/** What inventory asks of sales, the origin of most reservations. */
export interface SalesPort {
  /** Whether the sale a reservation's key was taken for was committed. */
  saleExists(ctx: RequestContext, req: Req<'sales.sale.exists'>, options?: RequestOptions): Promise<Reply<'sales.sale.exists'>>;
}

export function busSales(bus: Bus): SalesPort {
  return {
    saleExists: (ctx, req, options) => bus.request(salesSubjects, 'sales.sale.exists', req, ctx, options),
  };
}
