import type { RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import type { Credential } from '../db/credentials.repository';
import { answerIdempotencia, claimIdempotencia, releaseIdempotencia, type IdempotenciaKey } from '../db/idempotencia.repository';
import type { GatewayDb } from '../db/tables';
import { parseIdempotencyKey, requestHuella } from '../domain/idempotency-key';
import { MESSAGES, sendError } from './errors';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Marks an answer repeated from the first request under its key. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** Seconds a client should wait before retrying while the first request under its key runs. */
export const IDEMPOTENCY_RETRY_AFTER_SECONDS = 1;
/** Headers of the first answer a replay repeats; the others (quota, request id) are the replay's own. */
const REPLAYED_HEADERS = ['content-type', 'location'] as const;

/**
 * The `Idempotency-Key` header of a POST (IETF draft "The Idempotency-Key HTTP Header Field",
 * Stripe's semantics), per company and key for 24 hours:
 * - a new key runs the request and keeps its answer (status, body, `Content-Type`, `Location`)
 *   before sending it, unless it is a 5xx: that frees the key, so a retry runs again;
 * - the same request again gets that answer byte for byte, with `Idempotent-Replayed: true` (and
 *   `meta.idempotent: true` where the answer carries it: this time nothing was made);
 * - another request (method, path, query or body) under the key: 409, nothing runs;
 * - the same request while the first still runs: 409 with `Retry-After`.
 * Without the header nothing changes; a malformed one is 400 naming it.
 */
export function idempotency(db: Kysely<GatewayDb>, logger: Logger): RequestHandler {
  return async (req, res, next) => {
    const header = req.get(IDEMPOTENCY_HEADER);
    if (header === undefined) return next();
    const parsed = parseIdempotencyKey(header);
    if ('problem' in parsed)
      return sendError(res, 400, 'parametro_invalido', MESSAGES.invalidIdempotencyKey, { [IDEMPOTENCY_HEADER]: [parsed.problem] });
    const credential = (res.locals as { credential: Credential }).credential;
    const key: IdempotenciaKey = {
      empresa_id: credential.empresa.id,
      clave: parsed.clave,
      huella: requestHuella({ method: req.method, path: req.path, query: req.query, body: req.body }),
    };
    const claim = await claimIdempotencia(db, key);
    switch (claim.kind) {
      case 'other-request':
        return sendError(res, 409, 'referencia_en_conflicto', MESSAGES.idempotencyKeyReused, {
          [IDEMPOTENCY_HEADER]: [MESSAGES.idempotencyKeyReusedDetail],
        });
      case 'running':
        res.setHeader('Retry-After', String(IDEMPOTENCY_RETRY_AFTER_SECONDS));
        return sendError(res, 409, 'solicitud_en_curso', MESSAGES.idempotencyKeyRunning, {
          [IDEMPOTENCY_HEADER]: [MESSAGES.idempotencyKeyRunning],
        });
      case 'answered':
        for (const [name, value] of Object.entries(claim.cabeceras)) res.setHeader(name, value);
        res.setHeader(REPLAYED_HEADER, 'true');
        return void res.status(claim.status).end(asReplay(claim.cuerpo));
      case 'claimed':
        keepAnswer(res, async (status, cuerpo) => {
          try {
            if (status >= 500) return await releaseIdempotencia(db, key);
            const cabeceras = Object.fromEntries(
              REPLAYED_HEADERS.flatMap((name) => (res.hasHeader(name) ? [[name, String(res.getHeader(name))]] : [])),
            );
            await answerIdempotencia(db, key, { status, cuerpo, cabeceras });
          } catch (err) {
            // The answer still goes out; the key stays running until it is abandoned (then the same request may run again).
            logger.warn(
              { err, requestId: (res.locals as { requestId?: string }).requestId },
              'could not keep the answer of an idempotency key',
            );
          }
        });
        return next();
    }
  };
}

const FIRST_TIME = Buffer.from('"idempotent":false');
const REPEATED = Buffer.from('"idempotent":true');

/**
 * A kept answer as its replay sends it: an envelope's `meta.idempotent` (its last object, written
 * by the gateway) turns true, every other byte stays. Inside a JSON string the quotes would be
 * escaped, so the unescaped field is only ever meta's own.
 */
export function asReplay(cuerpo: Buffer): Buffer {
  const meta = cuerpo.lastIndexOf('"meta":');
  const at = meta < 0 ? -1 : cuerpo.indexOf(FIRST_TIME, meta);
  if (at < 0) return cuerpo;
  return Buffer.concat([cuerpo.subarray(0, at), REPEATED, cuerpo.subarray(at + FIRST_TIME.length)]);
}

/**
 * Collects the body as it is written and calls `keep` with it before the response ends, so a
 * retry that arrives as soon as the client has its answer finds it kept.
 */
function keepAnswer(res: Response, keep: (status: number, body: Buffer) => Promise<void>): void {
  const chunks: Buffer[] = [];
  const collect = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(
      Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'),
    );
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((...args: unknown[]) => {
    collect(args[0], args[1]);
    return write(...args);
  }) as Response['write'];
  res.end = ((...args: unknown[]) => {
    collect(args[0], args[1]);
    res.end = end as Response['end'];
    void keep(res.statusCode, Buffer.concat(chunks)).finally(() => end(...args));
    return res;
  }) as Response['end'];
}
