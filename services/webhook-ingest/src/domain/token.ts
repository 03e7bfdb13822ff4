import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new integration token: URL-safe, 192 random bits. */
export function generateToken(): string {
  return `wh_${randomBytes(24).toString('base64url')}`;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** First characters of a token, to recognise it in listings without revealing it. */
export function tokenPrefix(token: string): string {
  return token.slice(0, 8);
}

/** Constant-time comparison of a presented token with a stored hash. */
export function tokenMatches(token: string, storedHash: Buffer): boolean {
  const presented = hashToken(token);
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}
