import type { RequestContext } from '@erp/contracts';
import { annulDevolucionFlow, type AnnulRequest, type AnnulDevolucionDeps } from '../flows/annul-devolucion.flow';

/** `returns.admin.annul`: the flow annuls the return, then reverses its stock movement. */
export function annulReturnHandler(deps: AnnulDevolucionDeps) {
  return (req: AnnulRequest, reqCtx: RequestContext) => annulDevolucionFlow(deps, req, reqCtx);
}
