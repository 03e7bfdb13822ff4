import type { RequestContext } from '@erp/contracts';
import { annulReturn, type AnnulRequest, type AnnulReturnDeps } from '../flows/annul-return.flow';

/** `returns.admin.annul`: the flow annuls the return, then reverses its stock movement. */
export function annulReturnHandler(deps: AnnulReturnDeps) {
  return (req: AnnulRequest, reqCtx: RequestContext) => annulReturn(deps, req, reqCtx);
}
