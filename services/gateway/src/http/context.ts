import type { Response } from 'express';
import type { Registry } from 'prom-client';
import type { Bus, Logger } from '@erp/bus';
import type { Kysely } from 'kysely';
import type { Authenticator } from '../auth/authenticator';
import type { KeyUsage } from '../auth/key-usage';
import type { Credential } from '../db/credentials.repository';
import type { GatewayDb } from '../db/tables';
import type { RateDecision } from '../domain/rate-limit';
import type { FailedAuthLimiter } from '../limits/failed-auth-limiter';
import type { RateLimiter } from '../limits/rate-limiter';
import type { AnyRoute } from './route';

export interface AppDeps {
  bus: Bus;
  auth: Authenticator;
  limiter: RateLimiter;
  /** Refuses addresses that failed authentication too often; none when omitted. */
  authFailures?: FailedAuthLimiter;
  /** Proxies whose X-Forwarded-For names the client (0: the peer is the client). */
  trustProxyHops?: number;
  logger: Logger;
  metrics: Registry;
  routes: readonly AnyRoute[];
  /** Set while shutting down: responses ask clients to close their connections. */
  isDraining: () => boolean;
  /** Requests served at once (admission control); unlimited when omitted. */
  maxInflight?: number;
  /** Where the answers of requests with an `Idempotency-Key` are kept; the header is not honoured without it. */
  db?: Kysely<GatewayDb>;
  /** Records each key's last use (batched); none when omitted. */
  keyUsage?: KeyUsage;
}

/** What the steps of a request leave for the next ones. */
export interface Locals {
  requestId: string;
  credential?: Credential;
  rate?: RateDecision;
  /** Set when the quota was only checked (a conditional GET): the request is counted unless it answers 304. */
  uncounted?: boolean;
}

export const localsOf = (res: Response): Locals => res.locals as Locals;

/** A route's input once validated. */
export interface RouteInput {
  params: unknown;
  query: unknown;
  body: unknown;
}
