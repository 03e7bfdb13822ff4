import { createHash, randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import compression from 'compression';
import fresh from 'fresh';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  API_BASE,
  API_VERSION,
  UNKNOWN_PARAMETER_MESSAGE,
  WEBHOOK_BASE,
  detailsFromZod,
  grants,
  hasUnknownKeys,
  isAppError,
  type Reason,
  type TenantContext,
} from '@erp/contracts';
import type { Bus, Logger } from '@erp/bus';
import { translatePgError } from '@erp/db';
import type { Kysely } from 'kysely';
import type { Authenticator } from '../auth/authenticator';
import type { Credential } from '../db/credentials.repository';
import type { KeyUsage } from '../auth/key-usage';
import { bearerToken, missingKeyReason, plausibleApiKey } from '../domain/api-key';
import { hasDateFilters, type RateDecision } from '../domain/rate-limit';
import type { FailedAuthLimiter } from '../limits/failed-auth-limiter';
import type { AddressBlock, RateLimiter } from '../limits/rate-limiter';
import { ambiguousQuery, rejectAmbiguousQuery, requestLimits } from './edges';
import { idempotency } from './idempotency';
import { MESSAGES, OVERLOADED_RETRY_AFTER_SECONDS, appErrorAnswer, sendEnvelope, sendError } from './errors';
import type { GatewayDb } from '../db/tables';
import { openApiDocument, webhooksDocument } from '../openapi/openapi';
import { referenceRouter } from './reference';
import { bodyIsOptional, type AnyRoute, type ApiContext, type FileResult, type RouteResult } from './route';
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
  /** Records each key's last use (batched); none when omitted. */
  keyUsage?: KeyUsage;
}

/** Names the scope a refused request needed. */
export const ACCEPTED_SCOPES_HEADER = 'X-Accepted-Scopes';

interface Locals {
  requestId: string;
  credential?: Credential;
  rate?: RateDecision;
  /** Set when the quota was only checked (a conditional GET): the request is counted unless it answers 304. */
  uncounted?: boolean;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
/** Smaller answers go out as they are: compressing them saves less than its headers and CPU cost. */
const COMPRESSION_THRESHOLD_BYTES = 1024;
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
  // gzip or br for answers of 1 KB or more when the request accepts it; sets Vary: Accept-Encoding.
  app.use(compression({ threshold: COMPRESSION_THRESHOLD_BYTES }));

  const api = express.Router({ strict: false });
  const routesByPath = new Map<string, AnyRoute[]>();
  // Literal paths before parameterised ones, so /inventory/summary is never taken for /inventory/:id;
  // each path's 405 right after its routes, so GET /sales/batch is not taken for GET /sales/:id either.
  for (const route of [...deps.routes].sort((a, b) => paramCount(a.path) - paramCount(b.path)))
    routesByPath.set(route.path, [...(routesByPath.get(route.path) ?? []), route]);
  for (const [path, routes] of routesByPath) {
    for (const route of routes) {
      const chain: RequestHandler[] = [authenticate(deps), requireScope(route, deps), rejectAmbiguousQuery];
      if (route.method !== 'get' && route.method !== 'delete')
        chain.push(
          requireJson(bodyIsOptional(route)),
          express.json({ limit: BODY_LIMIT, type: () => true, strict: false }),
          limitJsonDepth,
        );
      if (route.method === 'post' && deps.db) chain.push(idempotency(deps.db, deps.logger));
      chain.push(dispatch(route, deps));
      api[route.method](route.path, ...chain);
    }
    const methods = routes.map((r) => r.method.toUpperCase());
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    api.all(path, (_req, res) => {
      res.setHeader('Allow', allow);
      sendError(res, 405, 'metodo_no_admitido', MESSAGES.methodNotAllowed);
    });
  }
  // The reference is generated from the same route table, and needs no key.
  app.use(API_BASE, referenceRouter(openApiDocument(deps.routes), webhooksDocument()));
  app.use(API_BASE, api);
  app.use(WEBHOOK_BASE, webhookRouter(deps));

  app.use((_req, res) => sendError(res, 404, 'ruta_desconocida', MESSAGES.routeNotFound));

  // Express recognises error handlers by their four parameters.
  app.use((thrown: unknown, _req: Request, res: Response, _next: NextFunction) => {
    void _next;
    // The gateway's own database out of reach (key lookups) is an outage like a service's: 503, not 500.
    const err = translatePgError(thrown);
    const locals = res.locals as Locals;
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') return sendError(res, 413, 'cuerpo_demasiado_grande', MESSAGES.bodyTooLarge);
    if (type === 'entity.parse.failed')
      return sendError(res, 400, 'json_invalido', MESSAGES.malformedJson, { _: [MESSAGES.malformedJsonDetail] });
    if (type === 'encoding.unsupported' || type === 'charset.unsupported')
      return sendError(res, 415, 'tipo_de_contenido_no_admitido', MESSAGES.unsupportedMediaType);
    if (type === 'request.aborted') return undefined;
    // The router could not percent-decode a path segment (`/sales/%zz`): the client's URL is malformed.
    if (err instanceof URIError)
      return sendError(res, 400, 'parametro_invalido', MESSAGES.invalidParams, { _: [MESSAGES.malformedPathDetail] });
    if (isAppError(err)) {
      const { status, body } = appErrorAnswer(err);
      if (status >= 500) deps.logger.warn({ requestId: locals.requestId, code: err.code, err }, err.message);
      return sendEnvelope(res, status, body);
    }
    const errorId = randomUUID();
    deps.logger.error({ requestId: locals.requestId, errorId, err }, 'unhandled error');
    res.setHeader('X-Error-Id', errorId);
    return sendError(res, 500, 'error_interno', MESSAGES.internal);
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
      return sendError(res, 503, 'servidor_saturado', MESSAGES.overloaded);
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
function requireScope(route: AnyRoute, deps: AppDeps): RequestHandler {
  const needed = route.scope;
  return async (req, res, next) => {
    if (needed === undefined || grants((res.locals as Locals).credential!.alcances, needed)) return next();
    if (!(await countDeferred(deps, req, res))) return;
    res.setHeader(ACCEPTED_SCOPES_HEADER, needed);
    sendError(res, 403, 'alcance_insuficiente', MESSAGES.insufficientScope(needed), {
      alcance: [MESSAGES.insufficientScopeDetail(needed)],
    });
  };
}

/**
 * A GET (or HEAD) with `If-None-Match` may answer 304. One whose query is refused anyway is
 * counted at once like any other answer.
 */
function mayAnswerNotModified(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && req.get('if-none-match') !== undefined && !ambiguousQuery(req.query ?? {});
}

function refuseBlocked(res: Response, retryAfter: number): void {
  res.setHeader('Retry-After', String(retryAfter));
  sendError(res, 429, 'demasiados_intentos', MESSAGES.tooManyAuthFailures);
}

/** Sends the quota's headers; false when the request is refused (429 sent). */
function applyQuota(deps: AppDeps, res: Response, rate: RateDecision): boolean {
  (res.locals as Locals).rate = rate;
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

/**
 * Counts a request whose quota was only checked, now that it answers something other than a
 * 304: one atomic count-and-check like any request's, so concurrent requests still cannot
 * together pass the limit (one that others used the quota up for meanwhile gets its 429 now).
 */
async function countDeferred(deps: AppDeps, req: Request, res: Response): Promise<boolean> {
  const locals = res.locals as Locals;
  if (!locals.uncounted) return true;
  locals.uncounted = false;
  const rate = await deps.limiter.consume(locals.credential!.empresa.id, hasDateFilters(req.query));
  return applyQuota(deps, res, rate);
}

/** A body must be JSON; none at all is refused unless the route's body may be left out (then it is `{}`). */
function requireJson(optional: boolean): RequestHandler {
  return (req, res, next) => {
    const hasBody =
      req.get('content-length') !== undefined ? req.get('content-length') !== '0' : req.get('transfer-encoding') !== undefined;
    if (hasBody && !req.is('application/json')) return sendError(res, 415, 'tipo_de_contenido_no_admitido', MESSAGES.unsupportedMediaType);
    if (!hasBody && optional) {
      req.body = {};
      return next();
    }
    if (!hasBody) return sendError(res, 400, 'json_invalido', MESSAGES.malformedJson, { _: ['El cuerpo de la solicitud es obligatorio'] });
    next();
  };
}

const limitJsonDepth: RequestHandler = (req, res, next) => {
  if (nestedDeeperThan(req.body, MAX_JSON_DEPTH))
    return sendError(res, 400, 'json_invalido', MESSAGES.jsonTooDeep, { _: [MESSAGES.jsonTooDeepDetail] });
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

interface RouteInput {
  params: unknown;
  query: unknown;
  body: unknown;
}

type Outcome =
  | { kind: 'answer'; result: RouteResult; input: RouteInput }
  | { kind: 'refusal'; status: number; reason: Reason; message: string; details: Record<string, string[]> }
  | { kind: 'thrown'; err: unknown }
  /** A conditional GET whose ETag still holds, known from the data's version alone. */
  | { kind: 'unchanged'; etag: string };

function dispatch(route: AnyRoute, deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const locals = res.locals as Locals;
    const outcome = await run(route, deps, req, locals);
    if (outcome.kind === 'unchanged') {
      res.setHeader('ETag', outcome.etag);
      res.vary('Accept-Encoding');
      return void res.status(304).end();
    }
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
      if (locals.uncounted) {
        if (notModified(req, body.etag)) {
          // As the 200 would: the compression middleware adds it only to answers with a body.
          res.vary('Accept-Encoding');
          return void res.status(304).end();
        }
        if (!(await countDeferred(deps, req, res))) return;
        // The quota's own page shows the count: built again now that this request is counted.
        if (route.showsQuota) {
          const again = await handle(route, deps, locals, outcome.input);
          if ('file' in again) throw new Error(`${route.path} showed the quota and answered a file`);
          body = render(again, locals.credential!, etagged);
          res.setHeader('ETag', body.etag!);
        }
      }
    }
    if (body.location) res.setHeader('Location', `${API_BASE}${body.location}`);
    res.statusCode = body.status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', body.length);
    // The parts go out as they are (no copy into one buffer), in one write to the socket.
    res.cork();
    for (const chunk of body.chunks.slice(0, -1)) res.write(chunk);
    res.end(body.chunks.at(-1));
    res.uncork();
  };
}

/** Validates the input and calls the route: what to answer, or why not. */
async function run(route: AnyRoute, deps: AppDeps, req: Request, locals: Locals): Promise<Outcome> {
  const refusal = (status: number, reason: Reason, message: string, details: Record<string, string[]>): Outcome => ({
    kind: 'refusal',
    status,
    reason,
    message,
    details,
  });
  const params = route.params?.safeParse(req.params);
  const query = route.query?.safeParse(req.query ?? {});
  if (params && !params.success) return refusal(400, 'parametro_invalido', MESSAGES.invalidParams, detailsFromZod(params.error));
  // A route without parameters takes none: one sent would be silently ignored.
  const unexpected = route.query ? [] : Object.keys(req.query ?? {});
  if (unexpected.length > 0)
    return refusal(
      400,
      'parametro_desconocido',
      MESSAGES.invalidParams,
      Object.fromEntries(unexpected.map((name) => [name, [UNKNOWN_PARAMETER_MESSAGE]])),
    );
  const badQueryText = route.query ? unstorableText(req.query) : undefined;
  if (badQueryText) return refusal(400, 'parametro_invalido', MESSAGES.invalidParams, { [badQueryText.path]: [badQueryText.message] });
  if (query && !query.success)
    return refusal(
      400,
      hasUnknownKeys(query.error) ? 'parametro_desconocido' : 'parametro_invalido',
      MESSAGES.invalidParams,
      detailsFromZod(query.error, UNKNOWN_PARAMETER_MESSAGE),
    );
  const bodyStatus = route.bodyErrorStatus ?? 422;
  const badBodyText = route.body ? unstorableText(req.body) : undefined;
  if (badBodyText) return refusal(bodyStatus, 'cuerpo_invalido', MESSAGES.invalidBody, { [badBodyText.path]: [badBodyText.message] });
  const body = route.body?.safeParse(req.body);
  if (body && !body.success)
    return refusal(
      bodyStatus,
      hasUnknownKeys(body.error) ? 'campo_desconocido' : 'cuerpo_invalido',
      MESSAGES.invalidBody,
      detailsFromZod(body.error),
    );
  const input = { params: params?.data, query: query?.data, body: body?.data };
  try {
    if (locals.uncounted && route.version) {
      const version = await route.version(input as Parameters<AnyRoute['handle']>[0], apiContext(deps, locals));
      const etag = version === undefined ? undefined : versionEtag(route, input, locals.credential!, version);
      if (etag !== undefined && notModified(req, etag)) return { kind: 'unchanged', etag };
    }
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
  return { ctx, bus: deps.bus, credential, rate: locals.rate! };
}

interface Rendered {
  status: number;
  /** The body in parts, written one after the other. */
  chunks: Array<Buffer | string>;
  length: number;
  location?: string;
  /** Strong validator of a GET's answer; none for other methods. */
  etag?: string;
}

/**
 * The body of a result. Data that is JSON text already (a service's reply as it arrived from the
 * bus) is written into the envelope as it is, without parsing it and serialising it again; the
 * envelope has the same fields in the same order either way.
 *
 * The ETag is the owning service's version of the data when the result carries one (`versionEtag`);
 * otherwise the SHA-256 of the body's bytes except `meta.timestamp`, the moment of the answer,
 * which would otherwise make every answer differ: two answers with one ETag have the same data,
 * pagination, filters and company, byte for byte.
 */
function render(
  result: Exclude<RouteResult, FileResult>,
  credential: Credential,
  etagged: { route: AnyRoute; input: RouteInput } | undefined,
): Rendered {
  const status = result.status ?? 200;
  if ('raw' in result) {
    const text = JSON.stringify(result.raw);
    const etag = etagged ? strongEtag([JSON.stringify(withoutTimestamp(result.raw))]) : undefined;
    return { status, chunks: [text], length: Buffer.byteLength(text), etag };
  }
  const meta = {
    empresa: credential.empresa.nombre,
    timestamp: new Date().toISOString(),
    filters_applied: result.filters_applied ?? {},
    ...(result.idempotent !== undefined ? { idempotent: result.idempotent } : {}),
  };
  const data = Buffer.isBuffer(result.data) ? result.data : Buffer.from(JSON.stringify(result.data));
  const pagination = result.pagination ? `,"pagination":${JSON.stringify(result.pagination)}` : '';
  const tail = `${pagination},"meta":${JSON.stringify(meta)}}`;
  const etag = !etagged
    ? undefined
    : result.version !== undefined
      ? versionEtag(etagged.route, etagged.input, credential, result.version)
      : strongEtag([ENVELOPE_HEAD, data, pagination, JSON.stringify({ ...meta, timestamp: undefined })]);
  return {
    status,
    chunks: [ENVELOPE_HEAD, data, tail],
    length: ENVELOPE_HEAD.length + data.length + Buffer.byteLength(tail),
    location: result.location,
    etag,
  };
}

function withoutTimestamp(raw: Record<string, unknown>): Record<string, unknown> {
  const meta = raw.meta;
  return meta && typeof meta === 'object' ? { ...raw, meta: { ...meta, timestamp: undefined } } : raw;
}

/**
 * The ETag of an answer built from a service's version of its data: the version, the route and
 * its validated input (so the filters, page and order), the company (its name is in `meta`) and
 * the interface version (the envelope's shape). Everything else in the body is a function of
 * these, so one ETag is one body; the owning service makes the version change with every change
 * of the data and of its serialisation.
 */
function versionEtag(route: AnyRoute, input: RouteInput, credential: Credential, version: string): string {
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
function notModified(req: Request, etag: string): boolean {
  return fresh({ 'if-none-match': req.get('if-none-match') }, { etag });
}

function strongEtag(parts: Array<Buffer | string>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return `"${hash.digest('base64url')}"`;
}

const ENVELOPE_HEAD = Buffer.from('{"success":true,"data":');

/**
 * A download: the whole file (200), or the one byte range asked for (206 with `Content-Range`),
 * `Content-Length` known before the first byte. A range outside the file, or several ranges, is
 * refused with 416 naming the size: a client resuming a download sends one `bytes=<received>-`.
 */
async function sendFile(req: Request, res: Response, file: FileResult['file']): Promise<void> {
  res.setHeader('Accept-Ranges', 'bytes');
  let start = 0;
  let end = file.size - 1;
  if (req.headers.range !== undefined) {
    const ranges = req.range(file.size);
    if (ranges === -2) return sendError(res, 400, 'rango_invalido', MESSAGES.invalidParams, { Range: [MESSAGES.malformedRange] });
    if (ranges === -1 || ranges === undefined || ranges.type !== 'bytes' || ranges.length !== 1) {
      res.setHeader('Content-Range', `bytes */${file.size}`);
      return sendError(res, 416, 'rango_invalido', MESSAGES.rangeNotSatisfiable(file.size), {
        Range: [MESSAGES.rangeNotSatisfiableDetail],
      });
    }
    ({ start, end } = ranges[0]!);
    res.status(206).setHeader('Content-Range', `bytes ${start}-${end}/${file.size}`);
  }
  const body = await file.open(start, end);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Disposition', `attachment; filename="${file.filename}"`);
  res.setHeader('Content-Length', String(end - start + 1));
  // A client that goes away ends the pipeline; the response then has nothing left to say.
  await pipeline(body, res).catch(() => undefined);
}
