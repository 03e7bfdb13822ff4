import { context as otelContext, propagation, type Context } from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { RequestContextSchema, type RequestContext } from '@erp/contracts';

/** Header carrying the request context (base64url JSON: names may hold any UTF-8). */
export const CONTEXT_HEADER = 'Erp-Context';
/** Reply header set when the reply carries an error. */
export const ERROR_HEADER = 'Erp-Error';
/** Reply header of a reply that embeds a handler's JSON text: its byte range `start-end` in the body. */
export const JSON_RANGE_HEADER = 'Erp-Json-Range';

const setter = { set: (carrier: MsgHdrs, key: string, value: string) => carrier.set(key, value) };
const getter = {
  get: (carrier: MsgHdrs, key: string) => (carrier.has(key) ? carrier.get(key) : undefined),
  keys: (carrier: MsgHdrs) => carrier.keys(),
};

/** Builds outgoing headers: the request context and the W3C trace context of `ctx`. */
export function buildHeaders(requestContext: RequestContext | undefined, ctx: Context = otelContext.active()): MsgHdrs {
  const h = natsHeaders();
  if (requestContext) h.set(CONTEXT_HEADER, Buffer.from(JSON.stringify(requestContext)).toString('base64url'));
  propagation.inject(ctx, h, setter);
  return h;
}

/** Reads the request context from incoming headers; undefined when absent or malformed. */
export function readRequestContext(h: MsgHdrs | undefined): RequestContext | undefined {
  if (!h?.has(CONTEXT_HEADER)) return undefined;
  try {
    const parsed = RequestContextSchema.safeParse(JSON.parse(Buffer.from(h.get(CONTEXT_HEADER), 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The trace context carried by incoming headers (or the active one when none). */
export function extractTraceContext(h: MsgHdrs | undefined): Context {
  return h ? propagation.extract(otelContext.active(), h, getter) : otelContext.active();
}

/** Serialises trace headers of the active context into a plain record (stored with outbox rows). */
export function traceCarrier(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(otelContext.active(), carrier);
  return carrier;
}
