import type { ParsedRequestOf, ReplyInputOf, TenantContext, salesApiSubjects } from '@erp/contracts';
import { createSale } from '../flows/create-sale.flow';
import type { CreateVentaDeps } from '../flows/venta-pipeline.flow';

type CreateRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.create'>;
type CreateReply = ReplyInputOf<typeof salesApiSubjects, 'sales.create'>;

/** `sales.create`: the invoicing pipeline (see `createSale`). */
export function createSaleHandler(deps: CreateVentaDeps) {
  return (req: CreateRequest, ctx: TenantContext): Promise<CreateReply> => createSale(deps, req, ctx);
}
