import type { Response } from 'express';
import type { RateDecision } from '../domain/rate-limit';
import { localsOf, type AppDeps } from './context';
import { MESSAGES, sendError } from './errors';

export function refuseBlocked(res: Response, retryAfter: number): void {
  res.setHeader('Retry-After', String(retryAfter));
  sendError(res, 429, 'demasiados_intentos', MESSAGES.tooManyAuthFailures);
}

/** Sends the quota's headers; false when the request is refused (429 sent). */
export function applyQuota(deps: AppDeps, res: Response, rate: RateDecision): boolean {
  localsOf(res).rate = rate;
  res.setHeader('X-RateLimit-Limit', String(rate.limit));
  res.setHeader('X-RateLimit-Remaining', String(rate.remaining));
  res.setHeader('X-RateLimit-Reset', String(rate.window.reset));
  if (!rate.allowed) {
    res.setHeader('Retry-After', String(Math.max(1, rate.window.reset - Math.floor(deps.limiter.now() / 1000))));
    sendError(res, 429, 'cuota_excedida', MESSAGES.rateLimited);
    return false;
  }
  return true;
}
