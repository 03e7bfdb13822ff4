import type { Bus } from '@erp/bus';
import { salesForReturnsSubjects, type ReplyOf, type RequestContext, type RequestOf } from '@erp/contracts';

type Req<S extends keyof typeof salesForReturnsSubjects> = RequestOf<typeof salesForReturnsSubjects, S>;
type Reply<S extends keyof typeof salesForReturnsSubjects> = ReplyOf<typeof salesForReturnsSubjects, S>;

/** What the returns flows ask of sales. */
export interface SalesPort {
  /** The sale as a return sees it: its state and lines. */
  returnable(ctx: RequestContext, req: Req<'sales.sale.returnable'>): Promise<Reply<'sales.sale.returnable'>>;
  /** Registers a return being made with the sale, under the sale's row lock; answers the lines the sale holds now. */
  register(ctx: RequestContext, req: Req<'sales.sale.return.register'>): Promise<Reply<'sales.sale.return.register'>>;
  /** Asks the sale to square its registrations (stop counting those whose return did not commit). */
  square(ctx: RequestContext, req: Req<'sales.sale.return.square'>): Promise<Reply<'sales.sale.return.square'>>;
}

export function busSales(bus: Bus): SalesPort {
  return {
    returnable: (ctx, req) => bus.request(salesForReturnsSubjects, 'sales.sale.returnable', req, ctx),
    register: (ctx, req) => bus.request(salesForReturnsSubjects, 'sales.sale.return.register', req, ctx),
    square: (ctx, req) => bus.request(salesForReturnsSubjects, 'sales.sale.return.square', req, ctx),
  };
}
