import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Plataforma } from '@erp/contracts';

/** The header each platform signs its deliveries in (lower case, as the gateway forwards it). */
export const SIGNATURE_HEADER: Record<Plataforma, string> = {
  woocommerce: 'x-wc-webhook-signature',
  shopify: 'x-shopify-hmac-sha256',
};

/** Both platforms send base64(HMAC-SHA256(secret, raw body)). */
export function signBody(body: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

/** Whether `signature` is the body's signature under `secret`, compared in constant time. */
export function verifySignature(body: Buffer, secret: string, signature: string | undefined): boolean {
  if (!signature) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(signature.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
