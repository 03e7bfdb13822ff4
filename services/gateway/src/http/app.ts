import { randomUUID } from 'node:crypto';
import compression from 'compression';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { Histogram } from 'prom-client';
import { API_BASE, WEBHOOK_BASE, isAppError } from '@erp/contracts';
import { translatePgError } from '@erp/db';
import { openApiDocument, webhooksDocument } from '../openapi/openapi';
import { admissionControl } from './admission';
import { authenticate, requireScope } from './authentication';
import { localsOf, type AppDeps } from './context';
import { dispatch } from './dispatch';
import { rejectAmbiguousQuery, requestLimits } from './edges';
import { MESSAGES, appErrorAnswer, sendEnvelope, sendError } from './errors';
import { idempotency } from './idempotency';
import { limitJsonDepth, requireJson } from './input';
import { referenceRouter } from './reference';
import { bodyIsOptional, type AnyRoute } from './route';
import { webhookRouter } from './webhooks';

export type { AppDeps } from './context';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
/** Smaller answers go out as they are: compressing them saves less than its headers and CPU cost. */
const COMPRESSION_THRESHOLD_BYTES = 1024;
const BODY_LIMIT = '1mb';

/**
 * The public HTTP edge, composed of its steps: request id and logging, the limits of a request
 * (`edges`), admission, then per route authentication and quota, scope, the query's form, the JSON
 * body, the `Idempotency-Key` and `dispatch` (validation, the bus, the answer and its ETag).
 */
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
    localsOf(res).requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    if (deps.isDraining()) res.setHeader('Connection', 'close');
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      const seconds = (performance.now() - started) / 1000;
      duration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      const locals = localsOf(res);
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
    const locals = localsOf(res);
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

function paramCount(path: string): number {
  return (path.match(/:/g) ?? []).length;
}
