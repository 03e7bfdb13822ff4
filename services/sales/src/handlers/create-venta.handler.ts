import type { ParsedRequestOf, ReplyInputOf, TenantContext, salesApiSubjects } from '@erp/contracts';
import { createVenta } from '../flows/create-venta.flow';
import type { CreateVentaDeps } from '../flows/venta-pipeline.flow';

type CreateRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.create'>;
type CreateReply = ReplyInputOf<typeof salesApiSubjects, 'sales.create'>;

/** `sales.create`: the invoicing pipeline (see `createVenta`). */
export function createVentaHandler(deps: CreateVentaDeps) {
  return (req: CreateRequest, ctx: TenantContext): Promise<CreateReply> => createVenta(deps, req, ctx);
}
