import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Bus } from '@erp/bus';
import type { ListPagination, Scope, ScopeResource, TenantContext } from '@erp/contracts';
import type { Credential } from '../db/credentials.repository';
import type { RateDecision } from '../domain/rate-limit';

/** What a route handler can use besides its validated input. */
export interface ApiContext {
  ctx: TenantContext;
  bus: Bus;
  credential: Credential;
  rate: RateDecision;
  /**
   * Forgets this replica's cached credentials of the caller's company. A change of keys is made by
   * whichever replica takes the bus request; the one that answers the client forgets at once too.
   */
  credentialsChanged(): void;
}

/** A result sent inside the success envelope (`success`, `data`, `pagination`, `meta`). */
export interface EnvelopeResult {
  status?: number;
  /** Values, or JSON text (a service's reply as it arrived) written into the envelope as it is. */
  data: unknown;
  pagination?: ListPagination;
  filters_applied?: Record<string, unknown>;
  idempotent?: boolean;
  /** Path below the API base of what a 201 created, sent as `Location`. */
  location?: string;
  /**
   * The owning service's validator of the data it read (as the route's `version` reads it): the
   * ETag is then derived from it and the request instead of from the body's bytes.
   */
  version?: string;
}

/** A result sent as the whole body, for the endpoints whose spec gives another shape. */
export interface RawResult {
  status?: number;
  raw: Record<string, unknown>;
}

/**
 * A file sent as the whole body (a download): its size is known before the first byte, and a
 * `Range` of it is answered 206 with only those bytes.
 */
export interface FileResult {
  file: {
    size: number;
    contentType: string;
    filename: string;
    /** The bytes from `start` to `end`, both included. */
    open(start: number, end: number): Promise<Readable>;
  };
}

export type RouteResult = EnvelopeResult | RawResult | FileResult;

type Input<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * What a successful call answers, declared beside the route so the OpenAPI document (and through
 * it the contract tests and the typed client) cannot miss or misstate an endpoint.
 */
export interface RouteResponse {
  /**
   * `single`: `schema` is the envelope's `data`; `list`: one item of `data`, with `pagination`;
   * `raw`: the whole body; `file`: a download of `contentType` (`schema` describes its content).
   */
  kind: 'single' | 'list' | 'raw' | 'file';
  /** Media type of a `file`. */
  contentType?: string;
  schema: z.ZodType;
  /** A list's `pagination`: `Pagination` unless it also reads by change (`ListPagination`). */
  pagination?: z.ZodType;
  /** Success statuses and what each means; `{200: ...}` when omitted. */
  statuses?: Partial<Record<200 | 201 | 202 | 206, string>>;
  /** `meta.idempotent` is always sent. */
  idempotent?: boolean;
}

/**
 * One public endpoint: its method and path, the zod schemas of its input (query and path
 * problems answer 400, body problems 422 unless `bodyErrorStatus` says otherwise), and the
 * handler that turns it into a bus request.
 */
export interface RouteDef<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** What a key must hold to call it (set for a whole resource by `scoped` in the route table); none: any valid key. */
  scope?: Scope;
  /** Express path below the API base, e.g. `/inventory/:id`. */
  path: string;
  summary: string;
  /** Longer text for the reference (Markdown): rules between fields that a schema cannot say. */
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Status of a body that fails `body`: 422 by default; 400 where the spec says so. */
  bodyErrorStatus?: 400 | 422;
  /** The reference's body when it says more than `body` checks here (e.g. items validated one by one by the service). */
  documentedBody?: z.ZodType;
  response?: RouteResponse;
  /**
   * The answer shows the caller's quota (so it changes with every counted request): a
   * conditional GET of it that is not answered 304 is built again once the request is counted.
   */
  showsQuota?: boolean;
  /**
   * The version of the data the route would answer, read without the data (a GET whose handler
   * returns `version` the same way): a conditional GET that still holds it is answered 304
   * without the data being read or sent. `undefined` when the request has no cheap version.
   */
  version?(input: { params: Input<P>; query: Input<Q>; body: Input<B> }, api: ApiContext): Promise<string | undefined>;
  /** Statuses the services behind the route add to the ones the gateway derives from its input (e.g. 422 for a business rule). */
  errors?: readonly number[];
  handle(input: { params: Input<P>; query: Input<Q>; body: Input<B> }, api: ApiContext): Promise<RouteResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any, any, any>;

/** The routes of one resource, each needing its `read` scope to GET and its `write` scope otherwise. */
export function scoped(resource: ScopeResource, routes: readonly AnyRoute[]): AnyRoute[] {
  return routes.map((route) => ({ ...route, scope: `${resource}:${route.method === 'get' ? 'read' : 'write'}` as Scope }));
}

/**
 * A body with no required field (an action such as `/rotate-secret`) may be left out, as
 * `curl -X POST` sends it: no body is then the empty object.
 */
export function bodyIsOptional(route: AnyRoute): boolean {
  return route.body !== undefined && route.body.safeParse({}).success;
}

export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(route: RouteDef<P, Q, B>): RouteDef<P, Q, B> {
  return route;
}
