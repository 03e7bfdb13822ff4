import type { RequestContext } from '@erp/contracts';
import { createReturn, type CreateRequest, type CreateReturnDeps } from '../flows/create-return.flow';

/** `returns.admin.create`: the flow registers with the sale, writes the return and puts its stock back. */
export function createReturnHandler(deps: CreateReturnDeps) {
  return (req: CreateRequest, reqCtx: RequestContext) => createReturn(deps, req, reqCtx);
}
