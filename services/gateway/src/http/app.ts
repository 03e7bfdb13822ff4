import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { API_BASE, WEBHOOK_BASE, detailsFromZod, isAppError, type Pagination, type TenantContext } from '@erp/contracts';
import type { Bus, Logger } from '@erp/bus';
import { translatePgError } from '@erp/db';
import type { Kysely } from 'kysely';
import type { Authenticator } from '../authenticator';
import type { Credential } from '../db/credentials.repository';
import type { GatewayDb } from '../db/tables';
import { bearerToken } from '../domain/api-key';
import { hasDateFilters, type RateDecision } from '../domain/rate-limit';
import type { FailedAuthLimiter } from '../failed-auth-limiter';
import type { RateLimiter } from '../rate-limiter';
import { rejectAmbiguousQuery, requestLimits } from './edges';
import { idempotency } from './idempotency';
import { MESSAGES, OVERLOADED_RETRY_AFTER_SECONDS, appErrorEnvelope, sendError } from './errors';
import { openApiDocument, webhooksDocument } from './openapi';
import { referenceRouter } from './reference';
import type { AnyRoute, RouteResult } from './route';
import { webhookRouter } from './webhooks';

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
}

interface Locals {
  requestId: string;
  credential?: Credential;
  rate?: RateDecision;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const BODY_LIMIT = '1mb';
/** Deepest nesting a JSON body may have: ours need a handful of levels; thousands overflow the stack when the body is serialised again. */
const MAX_JSON_DEPTH = 64;

/** The public HTTP edge: envelope, errors, authentication, quota, validation, dispatch over NATS. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', deps.trustProxyHops ?? 0);

  const duration = new Histogram({
    name: 'erp_http_request_duration_seconds',
    help: 'HTTP requests served by the gateway, by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [deps.metrics],
  });

  app.use((req, res, next) => {
    const started = performance.now();
    const incoming = req.get('x-request-id');
    const requestId = incoming && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
    (res.locals as Locals).requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    if (deps.isDraining()) res.setHeader('Connection', 'close');
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      const seconds = (performance.now() - started) / 1000;
      duration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      const locals = res.locals as Locals;
      deps.logger.info(
        {
          requestId,
          method: req.method,
          route,
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
          empresaId: locals.credential?.empresa.id,
        },
        'request',
      );
    });
    next();
  });
  app.use(requestLimits);
  app.use(admissionControl(deps));

  const api = express.Router({ strict: false });
  const routesByPath = new Map<string, AnyRoute[]>();
  // Literal paths before parameterised ones, so /inventory/summary is never taken for /inventory/:id;
  // each path's 405 right after its routes, so GET /sales/batch is not taken for GET /sales/:id either.
  for (const route of [...deps.routes].sort((a, b) => paramCount(a.path) - paramCount(b.path)))
    routesByPath.set(route.path, [...(routesByPath.get(route.path) ?? []), route]);
  for (const [path, routes] of routesByPath) {
    for (const route of routes) {
      const chain: RequestHandler[] = [authenticate(deps), rejectAmbiguousQuery];
      if (route.method !== 'get' && route.method !== 'delete')
        chain.push(requireJson, express.json({ limit: BODY_LIMIT, type: () => true, strict: false }), limitJsonDepth);
      if (route.method === 'post' && deps.db) chain.push(idempotency(deps.db, deps.logger));
      chain.push(dispatch(route, deps));
      api[route.method](route.path, ...chain);
    }
    const methods = routes.map((r) => r.method.toUpperCase());
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    api.all(path, (_req, res) => {
      res.setHeader('Allow', allow);
      sendError(res, 405, MESSAGES.methodNotAllowed);
    });
  }
  // The reference is generated from the same route table, and needs no key.
  app.use(API_BASE, referenceRouter(openApiDocument(deps.routes), webhooksDocument()));
  app.use(API_BASE, api);
  app.use(WEBHOOK_BASE, webhookRouter(deps));

  app.use((_req, res) => sendError(res, 404, MESSAGES.routeNotFound));

  // Express recognises error handlers by their four parameters.
  app.use((thrown: unknown, _req: Request, res: Response, _next: NextFunction) => {
    void _next;
    // The gateway's own database out of reach (key lookups) is an outage like a service's: 503, not 500.
    const err = translatePgError(thrown);
    const locals = res.locals as Locals;
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') return sendError(res, 413, MESSAGES.bodyTooLarge);
    if (type === 'entity.parse.failed') return sendError(res, 400, MESSAGES.malformedJson, { _: [MESSAGES.malformedJsonDetail] });
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') return sendError(res, 415, MESSAGES.unsupportedMediaType);
    if (type === 'request.aborted') return undefined;
    // The router could not percent-decode a path segment (`/sales/%zz`): the client's URL is malformed.
    if (err instanceof URIError) return sendError(res, 400, MESSAGES.invalidParams, { _: [MESSAGES.malformedPathDetail] });
    if (isAppError(err)) {
      const { status, body } = appErrorEnvelope(err);
      if (status >= 500) deps.logger.warn({ requestId: locals.requestId, code: err.code, err }, err.message);
      return sendError(res, status, body.error, body.details);
    }
    const errorId = randomUUID();
    deps.logger.error({ requestId: locals.requestId, errorId, err }, 'unhandled error');
    res.setHeader('X-Error-Id', errorId);
    return sendError(res, 500, MESSAGES.internal);
  });

  return app;
}

/**
 * Past `maxInflight` requests in progress, a new one is refused at once with 503 and Retry-After
 * instead of waiting behind the others: under overload clients get fast answers they can retry,
 * and the gateway's memory and the services' queues stay bounded instead of growing until
 * requests time out.
 */
function admissionControl(deps: AppDeps): RequestHandler {
  const max = deps.maxInflight ?? Number.POSITIVE_INFINITY;
  let inflight = 0;
  new Gauge({
    name: 'erp_gateway_inflight_requests',
    help: 'HTTP requests the gateway is serving now',
    registers: [deps.metrics],
    collect() {
      this.set(inflight);
    },
  });
  const shed = new Counter({
    name: 'erp_gateway_requests_shed_total',
    help: 'HTTP requests refused with 503 because the gateway was serving its maximum',
    registers: [deps.metrics],
  });
  return (_req, res, next) => {
    if (inflight >= max) {
      shed.inc();
      res.setHeader('Retry-After', String(OVERLOADED_RETRY_AFTER_SECONDS));
      return sendError(res, 503, MESSAGES.overloaded);
    }
    inflight++;
    // 'close' comes once per response, whether it finished or the client went away.
    res.once('close', () => inflight--);
    next();
  };
}

function paramCount(path: string): number {
  return (path.match(/:/g) ?? []).length;
}

/**
 * Authentication and quota. A key the cache holds costs one Redis round trip: the address's
 * failed-auth block is checked by the quota's own script. Any other key is checked against the
 * block first, so an address that guesses keys costs Postgres nothing once blocked.
 */
function authenticate(deps: AppDeps): RequestHandler {
  return async (req, res, next) => {
    const locals = res.locals as Locals;
    const address = req.ip ?? 'unknown';
    const key = bearerToken(req.get('authorization'));
    const cached = key ? deps.auth.cached(key) : undefined;
    if (cached) {
      const rate = await deps.limiter.consume(cached.apiKeyId, hasDateFilters(req.query), deps.authFailures?.block(address));
      if (rate === 'blocked') return refuseBlocked(res, deps.authFailures!.blocked());
      locals.credential = cached;
      return applyQuota(deps, res, rate, next);
    }
    const retryAfter = (await deps.authFailures?.retryAfter(address)) ?? 0;
    if (retryAfter > 0) return refuseBlocked(res, retryAfter);
    const credential = key ? await deps.auth.verify(key) : undefined;
    if (!credential) {
      // Only a presented key is a guess; a request without one is counted by nobody.
      if (key) await deps.authFailures?.recordFailure(address);
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, 401, MESSAGES.unauthorized);
    }
    locals.credential = credential;
    const rate = await deps.limiter.consume(credential.apiKeyId, hasDateFilters(req.query));
    return applyQuota(deps, res, rate, next);
  };
}

function refuseBlocked(res: Response, retryAfter: number): void {
  res.setHeader('Retry-After', String(retryAfter));
  sendError(res, 429, MESSAGES.tooManyAuthFailures);
}

function applyQuota(deps: AppDeps, res: Response, rate: RateDecision, next: NextFunction): void {
  (res.locals as Locals).rate = rate;
  res.setHeader('X-RateLimit-Limit', String(rate.limit));
  res.setHeader('X-RateLimit-Remaining', String(rate.remaining));
  res.setHeader('X-RateLimit-Reset', String(rate.window.reset));
  if (!rate.allowed) {
    res.setHeader('Retry-After', String(Math.max(1, rate.window.reset - Math.floor(deps.limiter.now() / 1000))));
    return sendError(res, 429, MESSAGES.rateLimited);
  }
  next();
}

const requireJson: RequestHandler = (req, res, next) => {
  const hasBody = req.get('content-length') !== undefined ? req.get('content-length') !== '0' : req.get('transfer-encoding') !== undefined;
  if (hasBody && !req.is('application/json')) return sendError(res, 415, MESSAGES.unsupportedMediaType);
  if (!hasBody) return sendError(res, 400, MESSAGES.malformedJson, { _: ['El cuerpo de la solicitud es obligatorio'] });
  next();
};

const limitJsonDepth: RequestHandler = (req, res, next) => {
  if (nestedDeeperThan(req.body, MAX_JSON_DEPTH)) return sendError(res, 400, MESSAGES.jsonTooDeep, { _: [MESSAGES.jsonTooDeepDetail] });
  next();
};

/** Walks the parsed body without recursion (the point is not to overflow the stack). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Where the first string Postgres cannot store as text is (`packages.0.cliente`, `_` for the value
 * itself) and why: U+0000, or a lone UTF-16 surrogate (`"\ud800"` in JSON), which is no Unicode
 * text at all. Refused here, it is a 400/422 with the field named; let through, the service
 * failed or stored a replacement character.
 */
function unstorableText(value: unknown): { path: string; message: string } | undefined {
  const pending: Array<[unknown, string[]]> = [[value, []]];
  while (pending.length > 0) {
    const [node, path] = pending.pop()!;
    if (typeof node === 'string') {
      const message = node.includes('\u0000') ? MESSAGES.nulCharacter : LONE_SURROGATE_RE.test(node) ? MESSAGES.loneSurrogate : undefined;
      if (message) return { path: path.length > 0 ? path.join('.') : '_', message };
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) pending.push([child, [...path, key]]);
    }
  }
  return undefined;
}

/** With the `u` flag a well-formed pair reads as one code point, so only an unpaired surrogate matches. */
const LONE_SURROGATE_RE = /\p{Cs}/u;

function dispatch(route: AnyRoute, deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const locals = res.locals as Locals;
    const params = route.params?.safeParse(req.params);
    const query = route.query?.safeParse(req.query ?? {});
    if (params && !params.success) return sendError(res, 400, MESSAGES.invalidParams, detailsFromZod(params.error));
    const badQueryText = route.query ? unstorableText(req.query) : undefined;
    if (badQueryText) return sendError(res, 400, MESSAGES.invalidParams, { [badQueryText.path]: [badQueryText.message] });
    if (query && !query.success) return sendError(res, 400, MESSAGES.invalidParams, detailsFromZod(query.error));
    const badBodyText = route.body ? unstorableText(req.body) : undefined;
    if (badBodyText)
      return sendError(res, route.bodyErrorStatus ?? 422, MESSAGES.invalidBody, { [badBodyText.path]: [badBodyText.message] });
    const body = route.body?.safeParse(req.body);
    if (body && !body.success) return sendError(res, route.bodyErrorStatus ?? 422, MESSAGES.invalidBody, detailsFromZod(body.error));
    const credential = locals.credential!;
    const ctx: TenantContext = { requestId: locals.requestId, empresa: credential.empresa, usuario: credential.usuario };
    const result: RouteResult = await route.handle(
      { params: params?.data, query: query?.data, body: body?.data },
      { ctx, bus: deps.bus, credential, rate: locals.rate! },
    );
    if ('raw' in result) return void res.status(result.status ?? 200).json(result.raw);
    if (result.location) res.setHeader('Location', `${API_BASE}${result.location}`);
    const meta = {
      empresa: credential.empresa.nombre,
      timestamp: new Date().toISOString(),
      filters_applied: result.filters_applied ?? {},
      ...(result.idempotent !== undefined ? { idempotent: result.idempotent } : {}),
    };
    if (Buffer.isBuffer(result.data)) return void sendEnvelopeAround(res, result.status ?? 200, result.data, result.pagination, meta);
    res
      .status(result.status ?? 200)
      .json({ success: true, data: result.data, ...(result.pagination ? { pagination: result.pagination } : {}), meta });
  };
}

/**
 * The success envelope written around data that is JSON text already (a service's reply as it
 * arrived from the bus): the same fields in the same order as the envelope of values, without
 * parsing the data and serialising it again. Head, data and tail go out as they are (no copy into
 * one buffer), in one write to the socket.
 */
function sendEnvelopeAround(
  res: Response,
  status: number,
  data: Buffer,
  pagination: Pagination | undefined,
  meta: Record<string, unknown>,
): void {
  const tail = `${pagination ? `,"pagination":${JSON.stringify(pagination)}` : ''},"meta":${JSON.stringify(meta)}}`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', ENVELOPE_HEAD.length + data.length + Buffer.byteLength(tail));
  res.cork();
  res.write(ENVELOPE_HEAD);
  res.write(data);
  res.end(tail);
  res.uncork();
}

const ENVELOPE_HEAD = Buffer.from('{"success":true,"data":');
