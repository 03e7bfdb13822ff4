import type { ParsedRequestOf, ReplyInputOf, TenantContext, salesApiSubjects } from '@erp/contracts';
import { updateSale, type UpdateSaleDeps } from '../flows/update-sale.flow';

type UpdateRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.update'>;
type UpdateReply = ReplyInputOf<typeof salesApiSubjects, 'sales.update'>;

/** `PUT /sales/{id}` (see `updateSale`). */
export function updateSaleHandler(deps: UpdateSaleDeps) {
  return (req: UpdateRequest, ctx: TenantContext): Promise<UpdateReply> => updateSale(deps, req, ctx);
}
