import { createHash, randomBytes } from 'node:crypto';

/** A new API key: a readable prefix and 32 random bytes. Shown once; only its hash is stored. */
export function generateApiKey(): string {
  return `erp_${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** What listings show of a key: enough to recognise it, too little to use it. */
export function keyPrefix(key: string): string {
  return key.slice(0, 8);
}

/** The key in `Authorization: Bearer <key>`, or undefined when the header is missing or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9._~+/=-]{16,200})$/i.exec(header?.trim() ?? '');
  return match?.[1];
}

/**
 * Why a request carries no key to look up: no `Authorization` header (or an empty one), or one
 * that is not `Bearer` and a key of the form keys have. Said from the header alone, so it never
 * tells whether some key exists.
 */
export function missingKeyReason(header: string | undefined): 'clave_ausente' | 'clave_malformada' {
  return header === undefined || header.trim() === '' ? 'clave_ausente' : 'clave_malformada';
}
