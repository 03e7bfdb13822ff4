import type { RequestHandler, Response } from 'express';
import { grants } from '@erp/contracts';
import type { Credential } from '../db/credentials.repository';
import { bearerToken, missingKeyReason, plausibleApiKey } from '../domain/api-key';
import { hasDateFilters } from '../domain/rate-limit';
import type { AddressBlock } from '../limits/rate-limiter';
import { countDeferred, mayAnswerNotModified } from './conditional';
import { localsOf, type AppDeps } from './context';
import { MESSAGES, sendError } from './errors';
import { applyQuota, refuseBlocked } from './quota';
import type { AnyRoute } from './route';

/** Names the scope a refused request needed. */
export const ACCEPTED_SCOPES_HEADER = 'X-Accepted-Scopes';

/**
 * Authentication and quota. A key the cache holds costs one Redis round trip: the address's
 * failed-auth block is checked by the quota's own script. Any other key is checked against the
 * block first, so an address that guesses keys costs Postgres nothing once blocked.
 */
export function authenticate(deps: AppDeps): RequestHandler {
  return async (req, res, next) => {
    const locals = localsOf(res);
    const address = req.ip ?? 'unknown';
    const key = bearerToken(req.get('authorization'));
    // A key of the current form whose checksum fails is a typo or a guess: refused before any lookup.
    if (key && !plausibleApiKey(key)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, 401, 'clave_invalida', MESSAGES.unauthorized);
    }
    const cached = key ? deps.auth.cached(key) : undefined;
    // A conditional GET is only checked against the quota here: its 304 costs nothing.
    const uncounted = mayAnswerNotModified(req);
    const quota = (empresaId: number, dateFiltered: boolean, block: AddressBlock | undefined) =>
      uncounted ? deps.limiter.check(empresaId, dateFiltered, block) : deps.limiter.consume(empresaId, dateFiltered, block);
    locals.uncounted = uncounted;
    if (cached) {
      if (refuseExpired(res, cached)) return;
      const rate = await quota(cached.empresa.id, hasDateFilters(req.query), deps.authFailures?.block(address));
      if (rate === 'blocked') return refuseBlocked(res, deps.authFailures!.blocked());
      locals.credential = cached;
      deps.keyUsage?.touch(cached.apiKeyId, address);
      return applyQuota(deps, res, rate) && next();
    }
    const retryAfter = (await deps.authFailures?.retryAfter(address)) ?? 0;
    if (retryAfter > 0) return refuseBlocked(res, retryAfter);
    if (!key) {
      // Not a guess at a key: counted by nobody, and said apart from a refused key.
      res.setHeader('WWW-Authenticate', 'Bearer');
      // Every 401 carries the spec's message; the reason and the header's detail say which case it is.
      const reason = missingKeyReason(req.get('authorization'));
      return sendError(res, 401, reason, MESSAGES.unauthorized, {
        Authorization: [reason === 'clave_ausente' ? MESSAGES.missingKeyDetail : MESSAGES.malformedKeyDetail],
      });
    }
    const credential = await deps.auth.verify(key);
    if (!credential) {
      await deps.authFailures?.recordFailure(address);
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, 401, 'clave_invalida', MESSAGES.unauthorized);
    }
    if (refuseExpired(res, credential)) return;
    locals.credential = credential;
    deps.keyUsage?.touch(credential.apiKeyId, address);
    const rate = await quota(credential.empresa.id, hasDateFilters(req.query), undefined);
    if (rate === 'blocked') return refuseBlocked(res, deps.authFailures!.blocked());
    return applyQuota(deps, res, rate) && next();
  };
}

/** A key past its `expira_el` (or its grace after a rotation): 401 `clave_expirada`, saying when. */
function refuseExpired(res: Response, credential: Credential): boolean {
  if (credential.expiraEl === null || credential.expiraEl.getTime() > Date.now()) return false;
  res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
  sendError(res, 401, 'clave_expirada', MESSAGES.unauthorized, {
    Authorization: [`El API key expiró el ${credential.expiraEl.toISOString()}`],
  });
  return true;
}

/**
 * The route's scope, declared in the route table: a key without it (nor the resource's `write`
 * for a `read`) gets 403 naming it, in `details` and in `X-Accepted-Scopes` (as GitHub's
 * `X-Accepted-GitHub-Permissions`). The refusal is counted like any answer.
 */
export function requireScope(route: AnyRoute, deps: AppDeps): RequestHandler {
  const needed = route.scope;
  return async (req, res, next) => {
    if (needed === undefined || grants(localsOf(res).credential!.alcances, needed)) return next();
    if (!(await countDeferred(deps, req, res))) return;
    res.setHeader(ACCEPTED_SCOPES_HEADER, needed);
    sendError(res, 403, 'alcance_insuficiente', MESSAGES.insufficientScope(needed), {
      alcance: [MESSAGES.insufficientScopeDetail(needed)],
    });
  };
}
