import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new subscription secret as the Standard Webhooks specification writes it: `whsec_` + base64 of 24 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/**
 * The `webhook-signature` header of a delivery (Standard Webhooks): `v1,` + base64 of the
 * HMAC-SHA256, keyed with the secret's decoded bytes, of `<id>.<timestamp>.<body>`; one per
 * secret, separated by spaces (during a rotation a receiver holding either secret verifies it).
 */
export function signDelivery(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
