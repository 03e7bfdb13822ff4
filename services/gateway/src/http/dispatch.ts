import type { Request, RequestHandler, Response } from 'express';
import type { TenantContext } from '@erp/contracts';
import { countDeferred, sendNotModified, settleConditional, unchangedEtag } from './conditional';
import { localsOf, type AppDeps, type Locals, type RouteInput } from './context';
import { sendFile } from './downloads';
import { sendError } from './errors';
import { validateInput, type Refusal } from './input';
import { render, sendRendered } from './render';
import type { AnyRoute, ApiContext, RouteResult } from './route';

type Outcome =
  | { kind: 'answer'; result: RouteResult; input: RouteInput }
  | ({ kind: 'refusal' } & Refusal)
  | { kind: 'thrown'; err: unknown }
  /** A conditional GET whose ETag still holds, known from the data's version alone. */
  | { kind: 'unchanged'; etag: string };

/**
 * The route's last step: validate, call it over the bus, answer. A conditional GET that still
 * holds answers 304 uncounted; anything else is counted before it is sent.
 */
export function dispatch(route: AnyRoute, deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const locals = localsOf(res);
    const outcome = await run(route, deps, req, res);
    if (outcome.kind === 'unchanged') return sendNotModified(res, outcome.etag);
    if (outcome.kind !== 'answer') {
      if (!(await countDeferred(deps, req, res))) return;
      if (outcome.kind === 'thrown') throw outcome.err;
      return sendError(res, outcome.status, outcome.reason, outcome.message, outcome.details);
    }
    if ('file' in outcome.result) {
      // A download is not conditional: a request that waited to be counted is counted now.
      if (!(await countDeferred(deps, req, res))) return;
      return sendFile(req, res, outcome.result.file);
    }
    const etagged = route.method === 'get' ? { route, input: outcome.input } : undefined;
    let body = render(outcome.result, locals.credential!, etagged);
    if (body.etag) {
      res.statusCode = body.status;
      res.setHeader('ETag', body.etag);
      const settled = await settleConditional(deps, req, res, body.etag);
      if (settled === 'answered') return;
      // The quota's own page shows the count: built again now that this request is counted.
      if (settled === 'counted-now' && route.showsQuota) {
        const again = await handle(route, deps, locals, outcome.input);
        if ('file' in again) throw new Error(`${route.path} showed the quota and answered a file`);
        body = render(again, locals.credential!, etagged);
        res.setHeader('ETag', body.etag!);
      }
    }
    sendRendered(res, body);
  };
}

/** Validates the input and calls the route: what to answer, or why not. */
async function run(route: AnyRoute, deps: AppDeps, req: Request, res: Response): Promise<Outcome> {
  const validated = validateInput(route, req);
  if ('refusal' in validated) return { kind: 'refusal', ...validated.refusal };
  const { input } = validated;
  const locals = localsOf(res);
  try {
    const etag = await unchangedEtag(req, res, route, input, apiContext(deps, locals));
    if (etag !== undefined) return { kind: 'unchanged', etag };
    return { kind: 'answer', result: await handle(route, deps, locals, input), input };
  } catch (err) {
    return { kind: 'thrown', err };
  }
}

function handle(route: AnyRoute, deps: AppDeps, locals: Locals, input: RouteInput): Promise<RouteResult> {
  return route.handle(input as Parameters<AnyRoute['handle']>[0], apiContext(deps, locals));
}

function apiContext(deps: AppDeps, locals: Locals): ApiContext {
  const credential = locals.credential!;
  const ctx: TenantContext = { requestId: locals.requestId, empresa: credential.empresa, usuario: credential.usuario };
  return {
    ctx,
    bus: deps.bus,
    credential,
    rate: locals.rate!,
    credentialsChanged: () => deps.auth.invalidate(credential.empresa.id),
  };
}
