import type { Response } from 'express';
import { API_BASE } from '@erp/contracts';
import type { Credential } from '../db/credentials.repository';
import { strongEtag, versionEtag } from './conditional';
import type { RouteInput } from './context';
import type { AnyRoute, FileResult, RouteResult } from './route';

export interface Rendered {
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
export function render(
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

const ENVELOPE_HEAD = Buffer.from('{"success":true,"data":');

/** Sends a rendered answer: its parts as they are (no copy into one buffer), in one write to the socket. */
export function sendRendered(res: Response, body: Rendered): void {
  if (body.location) res.setHeader('Location', `${API_BASE}${body.location}`);
  res.statusCode = body.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.cork();
  for (const chunk of body.chunks.slice(0, -1)) res.write(chunk);
  res.end(body.chunks.at(-1));
  res.uncork();
}
