import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './openapi.js';

/**
 * An event as a subscription's URL receives it (`ping` included, the test delivery): a union
 * discriminated by `type`, so `data` narrows by it.
 */
export type DeliveredEvent = components['schemas']['DeliveredEvent'];

/** An event as `GET /events` lists it (no `ping`: the test delivery is never logged), narrowing the same way. */
export type PartnerEvent = components['schemas']['PartnerEvent'];

export class DeliveryVerificationError extends Error {
  override readonly name = 'DeliveryVerificationError';
}

/**
 * Verifies a delivery per the Standard Webhooks specification and returns its event: the
 * `webhook-signature` must carry a `v1` HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`
 * made with the subscription's `whsec_` secret, and the timestamp must be within `toleranceSeconds`
 * of now (replays of an old delivery are refused). Pass the body exactly as received.
 */
export function verifyDelivery(
  secret: string,
  rawBody: string,
  headers: Record<string, string | string[] | undefined>,
  options: { toleranceSeconds?: number; now?: Date } = {},
): DeliveredEvent {
  const header = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new DeliveryVerificationError('Faltan las cabeceras webhook-id, webhook-timestamp o webhook-signature');
  const seconds = Number(timestamp);
  const now = (options.now ?? new Date()).getTime() / 1000;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300))
    throw new DeliveryVerificationError('webhook-timestamp fuera de la tolerancia');
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  const valid = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!valid) throw new DeliveryVerificationError('Firma inválida');
  return JSON.parse(rawBody) as DeliveredEvent;
}
