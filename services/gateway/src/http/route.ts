import type { z } from 'zod';
import type { Bus } from '@erp/bus';
import type { Pagination, TenantContext } from '@erp/contracts';
import type { Credential } from '../db/credentials.repository';
import type { RateDecision } from '../domain/rate-limit';

/** What a route handler can use besides its validated input. */
export interface ApiContext {
  ctx: TenantContext;
  bus: Bus;
  credential: Credential;
  rate: RateDecision;
}

/** A result sent inside the success envelope (`success`, `data`, `pagination`, `meta`). */
export interface EnvelopeResult {
  status?: number;
  data: unknown;
  pagination?: Pagination;
  filters_applied?: Record<string, unknown>;
  idempotent?: boolean;
}

/** A result sent as the whole body, for the endpoints whose spec gives another shape. */
export interface RawResult {
  status?: number;
  raw: Record<string, unknown>;
}

export type RouteResult = EnvelopeResult | RawResult;

type Input<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * One public endpoint: its method and path, the zod schemas of its input (query and path
 * problems answer 400, body problems 422 unless `bodyErrorStatus` says otherwise), and the
 * handler that turns it into a bus request.
 */
export interface RouteDef<P extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined> {
  method: 'get' | 'post' | 'put';
  /** Express path below the API base, e.g. `/inventory/:id`. */
  path: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Status of a body that fails `body`: 422 by default; 400 where the spec says so. */
  bodyErrorStatus?: 400 | 422;
  handle(input: { params: Input<P>; query: Input<Q>; body: Input<B> }, api: ApiContext): Promise<RouteResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any, any, any>;

export function defineRoute<P extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  route: RouteDef<P, Q, B>,
): RouteDef<P, Q, B> {
  return route;
}
