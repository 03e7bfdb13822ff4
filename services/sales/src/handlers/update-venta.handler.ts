import type { ParsedRequestOf, ReplyInputOf, TenantContext, salesApiSubjects } from '@erp/contracts';
import { updateVenta, type UpdateVentaDeps } from '../flows/update-venta.flow';

type UpdateRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.update'>;
type UpdateReply = ReplyInputOf<typeof salesApiSubjects, 'sales.update'>;

/** `PUT /sales/{id}` (see `updateVenta`). */
export function updateVentaHandler(deps: UpdateVentaDeps) {
  return (req: UpdateRequest, ctx: TenantContext): Promise<UpdateReply> => updateVenta(deps, req, ctx);
}
