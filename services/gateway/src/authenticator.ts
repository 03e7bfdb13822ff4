import type { Kysely } from 'kysely';
import { findCredential, type Credential } from './db/credentials.repository';
import type { GatewayDb } from './db/tables';
import { hashApiKey } from './domain/api-key';

/**
 * Verifies API keys with a short in-process cache. Revoking a key or deactivating a company
 * publishes an event that clears the cache of every replica; the TTL bounds staleness if that
 * event is missed. Unknown keys are not cached, so a key created a moment ago works at once.
 */
export class Authenticator {
  private readonly cache = new Map<string, { credential: Credential; expires: number }>();

  constructor(
    private readonly db: Kysely<GatewayDb>,
    private readonly ttlMs: number,
  ) {}

  async verify(key: string): Promise<Credential | undefined> {
    const hash = hashApiKey(key);
    const cacheKey = hash.toString('base64');
    const hit = this.cache.get(cacheKey);
    if (hit && hit.expires > Date.now()) return hit.credential;
    const credential = await findCredential(this.db, hash);
    if (credential && this.ttlMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(cacheKey, { credential, expires: Date.now() + this.ttlMs });
    } else this.cache.delete(cacheKey);
    return credential;
  }

  /** Drops cached credentials of a company (all of them when no company is given). */
  invalidate(empresaId?: number): void {
    if (empresaId === undefined) return this.cache.clear();
    for (const [k, v] of this.cache) if (v.credential.empresa.id === empresaId) this.cache.delete(k);
  }
}
