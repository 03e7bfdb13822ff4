import type { RequestContext } from '@erp/contracts';
import { createDevolucion, type CreateRequest, type CreateDevolucionDeps } from '../flows/create-devolucion.flow';

/** `returns.admin.create`: the flow registers with the sale, writes the return and puts its stock back. */
export function createReturnHandler(deps: CreateDevolucionDeps) {
  return (req: CreateRequest, reqCtx: RequestContext) => createDevolucion(deps, req, reqCtx);
}
