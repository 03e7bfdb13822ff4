import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express, RequestHandler } from 'express';
import { MESSAGES, errorEnvelope, sendError } from './errors';

/** Longest request target (path and query) answered normally; longer ones get 414. */
export const MAX_URL_BYTES = 8 * 1024;
/** Largest sum of header names and values answered normally; larger gets 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * What Node's parser reads of the request line and headers before it gives up. Above both limits,
 * so the usual oversize request reaches `requestLimits` and is answered precisely; past it,
 * `answerClientError` still answers in the envelope.
 */
export const PARSER_MAX_HEADER_BYTES = 64 * 1024;

/** The HTTP server of the gateway: bounded request line and headers, every refusal in the envelope. */
export function createHttpServer(app: Express): Server {
  const server = createServer({ maxHeaderSize: PARSER_MAX_HEADER_BYTES }, app);
  server.on('clientError', answerClientError);
  return server;
}

/** 414 for a URL longer than `MAX_URL_BYTES`, 431 for headers larger than `MAX_HEADER_BYTES`. */
export const requestLimits: RequestHandler = (req, res, next) => {
  if (Buffer.byteLength(req.originalUrl) > MAX_URL_BYTES) return sendError(res, 414, 'url_demasiado_larga', MESSAGES.uriTooLong);
  let headerBytes = 0;
  for (const part of req.rawHeaders) headerBytes += Buffer.byteLength(part) + 2;
  if (headerBytes > MAX_HEADER_BYTES) return sendError(res, 431, 'encabezados_demasiado_grandes', MESSAGES.headersTooLarge);
  next();
};

/**
 * Refuses a query string a schema would misread: `nombre=a&nombre=b` (which value?) and
 * `nombre[]=x` or `nombre[a]=b` (PHP-style arrays and objects the API does not take, which a
 * lenient parser would drop silently). 400 naming each parameter.
 */
export const rejectAmbiguousQuery: RequestHandler = (req, res, next) => {
  const details = ambiguousQuery(req.query ?? {});
  if (details) return sendError(res, 400, 'parametro_invalido', MESSAGES.invalidParams, details);
  next();
};

/** The parameters `rejectAmbiguousQuery` refuses, each with why; undefined when there is none. */
export function ambiguousQuery(query: Record<string, unknown>): Record<string, string[]> | undefined {
  // Entries, not assignments: a parameter named `__proto__` is named like any other.
  const details: Array<[string, string[]]> = [];
  for (const [name, value] of Object.entries(query)) {
    if (/[[\]]/.test(name)) details.push([name, [MESSAGES.bracketedParam]]);
    else if (Array.isArray(value)) details.push([name, [MESSAGES.repeatedParam]]);
  }
  return details.length > 0 ? Object.fromEntries(details) : undefined;
}

/**
 * Requests Node's parser refuses before Express sees them: a request line and headers past
 * `PARSER_MAX_HEADER_BYTES` (431) or malformed HTTP (400). Node would answer a bare status with
 * no body; the partner gets the error envelope like every other answer.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || !err.code?.startsWith('HPE_')) {
    socket.destroy(err);
    return;
  }
  // Node reports an endless request line and endless headers alike: both are 431 here.
  const envelope =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? errorEnvelope(431, 'encabezados_demasiado_grandes', MESSAGES.headersTooLarge)
      : errorEnvelope(400, 'solicitud_malformada', MESSAGES.malformedHttp);
  const reason = envelope.code === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  const status = envelope.code;
  const body = JSON.stringify(envelope);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
  );
}
