import { createHash } from 'node:crypto';
import fresh from 'fresh';
import type { Request, Response } from 'express';
import { API_VERSION } from '@erp/contracts';
import type { Credential } from '../db/credentials.repository';
import { hasDateFilters } from '../domain/rate-limit';
import { localsOf, type AppDeps, type RouteInput } from './context';
import { ambiguousQuery } from './edges';
import { applyQuota } from './quota';
import type { AnyRoute, ApiContext } from './route';

// Conditional GETs, and the rule that a 304 costs no quota: a GET with If-None-Match has its quota
// only checked when it is authenticated (`mayAnswerNotModified`); it answers 304 uncounted when the
// data's version (`unchangedEtag`) or its answer's ETag (`settleConditional`) still holds, and is
// counted by `countDeferred` once it answers anything else.

/**
 * A GET (or HEAD) with `If-None-Match` may answer 304. One whose query is refused anyway is
 * counted at once like any other answer.
 */
export function mayAnswerNotModified(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && req.get('if-none-match') !== undefined && !ambiguousQuery(req.query ?? {});
}

/**
 * Counts a request whose quota was only checked, now that it answers something other than a
 * 304: one atomic count-and-check like any request's, so concurrent requests still cannot
 * together pass the limit (one that others used the quota up for meanwhile gets its 429 now).
 */
export async function countDeferred(deps: AppDeps, req: Request, res: Response): Promise<boolean> {
  const locals = localsOf(res);
  if (!locals.uncounted) return true;
  locals.uncounted = false;
  const rate = await deps.limiter.consume(locals.credential!.empresa.id, hasDateFilters(req.query));
  return applyQuota(deps, res, rate);
}

/**
 * The ETag of the data's version when it still holds for a request that waits to be counted: its
 * 304 is answered before the data is read. Undefined otherwise; a request already counted, or a
 * route without a version, does not ask the service for one.
 */
export async function unchangedEtag(
  req: Request,
  res: Response,
  route: AnyRoute,
  input: RouteInput,
  api: ApiContext,
): Promise<string | undefined> {
  const locals = localsOf(res);
  if (!locals.uncounted || !route.version) return undefined;
  const version = await route.version(input as Parameters<AnyRoute['handle']>[0], api);
  const etag = version === undefined ? undefined : versionEtag(route, input, locals.credential!, version);
  return etag !== undefined && notModified(req, etag) ? etag : undefined;
}

/**
 * Settles the quota of a GET once its answer's ETag is known: a request that waits to be counted
 * answers 304 uncounted when the ETag still holds, and is counted now otherwise. `answered`: a 304
 * (or the 429 of the count) was sent; `counted`: it was counted when it was authenticated;
 * `counted-now`: counted here, so an answer that shows the quota is out of date.
 */
export async function settleConditional(
  deps: AppDeps,
  req: Request,
  res: Response,
  etag: string,
): Promise<'answered' | 'counted' | 'counted-now'> {
  if (!localsOf(res).uncounted) return 'counted';
  if (notModified(req, etag)) {
    sendNotModified(res, etag);
    return 'answered';
  }
  return (await countDeferred(deps, req, res)) ? 'counted-now' : 'answered';
}

export function sendNotModified(res: Response, etag: string): void {
  res.setHeader('ETag', etag);
  // As the 200 would: the compression middleware adds it only to answers with a body.
  res.vary('Accept-Encoding');
  res.status(304).end();
}

/**
 * The ETag of an answer built from a service's version of its data: the version, the route and
 * its validated input (so the filters, page and order), the company (its name is in `meta`) and
 * the interface version (the envelope's shape). Everything else in the body is a function of
 * these, so one ETag is one body; the owning service makes the version change with every change
 * of the data and of its serialisation.
 */
export function versionEtag(route: AnyRoute, input: RouteInput, credential: Credential, version: string): string {
  return strongEtag([
    'version\n',
    `${API_VERSION}\n${route.method} ${route.path}\n${JSON.stringify(input)}\n`,
    `${credential.empresa.id}\n${credential.empresa.nombre}\n${version}`,
  ]);
}

/**
 * `fresh` compares If-None-Match with the ETag as RFC 9110 says (lists, `*`, W/ prefixes). Only
 * that header is given: a request's `Cache-Control: no-cache` is for the caches on the way, and
 * fetch adds it to every request with If-None-Match (req.fresh would then never answer 304).
 */
export function notModified(req: Request, etag: string): boolean {
  return fresh({ 'if-none-match': req.get('if-none-match') }, { etag });
}

export function strongEtag(parts: Array<Buffer | string>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return `"${hash.digest('base64url')}"`;
}
