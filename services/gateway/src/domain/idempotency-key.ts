import { createHash } from 'node:crypto';
import { canonicalJson } from '@erp/contracts';

/** Longest key accepted (Stripe's limit; the IETF draft leaves it to the server). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** The characters a key may hold (the OpenAPI document says the same). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * The key of an `Idempotency-Key` header: the IETF draft sends it as a Structured Field string
 * (`"8e03978e-…"`), Stripe's clients bare; both are taken, the quotes are not part of the key.
 * Visible ASCII only, without spaces (HTTP trims them from a header's ends, so a key of spaces
 * would arrive empty), 1 to 255 characters.
 */
export function parseIdempotencyKey(header: string): { clave: string } | { problem: string } {
  const trimmed = header.trim();
  const quoted = trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"');
  const clave = quoted ? trimmed.slice(1, -1).replace(/\\(["\\])/g, '$1') : trimmed;
  if (clave.length === 0) return { problem: 'No puede estar vacío' };
  if (clave.length > MAX_IDEMPOTENCY_KEY_LENGTH) return { problem: `Debe tener como máximo ${MAX_IDEMPOTENCY_KEY_LENGTH} caracteres` };
  if (!IDEMPOTENCY_KEY_PATTERN.test(clave)) return { problem: 'Solo puede contener caracteres ASCII visibles, sin espacios' };
  return { clave };
}

/**
 * What makes two requests under one key "the same request": method, path, query and body, the
 * body compared as canonical JSON (key order and whitespace do not count), hashed with SHA-256.
 */
export function requestHuella(request: { method: string; path: string; query: unknown; body: unknown }): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}
