import type { Bus } from '@erp/bus';
import { returnsForSalesSubjects, type ReplyOf, type RequestContext, type RequestOf } from '@erp/contracts';

type Req<S extends keyof typeof returnsForSalesSubjects> = RequestOf<typeof returnsForSalesSubjects, S>;
type Reply<S extends keyof typeof returnsForSalesSubjects> = ReplyOf<typeof returnsForSalesSubjects, S>;

/** What the sales flows ask of the returns service. */
export interface ReturnsPort {
  /** Which of a sale's pending registrations became committed returns (`ocupada` while one of its returns is being made). */
  ventaRegistrations(ctx: RequestContext, req: Req<'returns.sale.registrations'>): Promise<Reply<'returns.sale.registrations'>>;
}

export function busReturns(bus: Bus): ReturnsPort {
  return {
    ventaRegistrations: (ctx, req) => bus.request(returnsForSalesSubjects, 'returns.sale.registrations', req, ctx),
  };
}
