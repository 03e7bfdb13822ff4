import type { Request, RequestHandler } from 'express';
import { UNKNOWN_PARAMETER_MESSAGE, detailsFromZod, hasUnknownKeys, type Reason } from '@erp/contracts';
import type { RouteInput } from './context';
import { MESSAGES, sendError } from './errors';
import type { AnyRoute } from './route';

/** Deepest nesting a JSON body may have: ours need a handful of levels; thousands overflow the stack when the body is serialised again. */
const MAX_JSON_DEPTH = 64;

/** A body must be JSON; none at all is refused unless the route's body may be left out (then it is `{}`). */
export function requireJson(optional: boolean): RequestHandler {
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

export const limitJsonDepth: RequestHandler = (req, res, next) => {
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

/** Why a request's input is refused. */
export interface Refusal {
  status: number;
  reason: Reason;
  message: string;
  details: Record<string, string[]>;
}

/**
 * The route's input from the request, parsed by its schemas, or why not: path and query problems
 * are 400, body problems the route's body status (422 unless it says 400). Nothing it does not
 * take is ignored: a parameter of a route without any is refused by name.
 */
export function validateInput(route: AnyRoute, req: Request): { input: RouteInput } | { refusal: Refusal } {
  const refusal = (status: number, reason: Reason, message: string, details: Record<string, string[]>) => ({
    refusal: { status, reason, message, details },
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
  return { input: { params: params?.data, query: query?.data, body: body?.data } };
}
