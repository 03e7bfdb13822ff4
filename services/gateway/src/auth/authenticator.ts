import type { Kysely } from 'kysely';
import { findCredential, type Credential } from '../db/credentials.repository';
import type { GatewayDb } from '../db/tables';
import { hashApiKey } from '../domain/api-key';

/** Entries each cache keeps at most; past it the cache starts over rather than grow without bound. */
const MAX_ENTRIES = 10_000;

/**
 * Verifies API keys with a short in-process cache. Revoking a key or deactivating a company
 * publishes an event that clears the cache of every replica; the TTL bounds staleness if that
 * event is missed. Unknown keys are cached too (by hash, for `negativeTtlMs`), so a client
 * repeating a bad key costs no Postgres query each time; any change of credentials (a key
 * created, a company reactivated) clears them, so a new key works at once. A lookup that was
 * under way when the cache was cleared answers its request but caches nothing: it may have read
 * the key before the change committed.
 */
export class Authenticator {
  private readonly cache = new Map<string, { credential: Credential; expires: number }>();
  private readonly unknown = new Map<string, number>();
  /** Bumped by every `invalidate`; a lookup caches its answer only when it is unchanged since it began. */
  private generation = 0;

  constructor(
    private readonly db: Kysely<GatewayDb>,
    private readonly ttlMs: number,
    private readonly negativeTtlMs: number,
  ) {}

  /** The credential of `key` when the cache holds it (no query); undefined when it must be verified. */
  cached(key: string): Credential | undefined {
    const hit = this.cache.get(hashApiKey(key).toString('base64'));
    return hit && hit.expires > Date.now() ? hit.credential : undefined;
  }

  async verify(key: string): Promise<Credential | undefined> {
    const hash = hashApiKey(key);
    const cacheKey = hash.toString('base64');
    const now = Date.now();
    const hit = this.cache.get(cacheKey);
    if (hit && hit.expires > now) return hit.credential;
    if ((this.unknown.get(cacheKey) ?? 0) > now) return undefined;
    const generation = this.generation;
    const credential = await findCredential(this.db, hash);
    if (generation !== this.generation) return credential;
    if (credential && this.ttlMs > 0) {
      if (this.cache.size > MAX_ENTRIES) this.cache.clear();
      this.cache.set(cacheKey, { credential, expires: Date.now() + this.ttlMs });
    } else this.cache.delete(cacheKey);
    if (!credential && this.negativeTtlMs > 0) {
      if (this.unknown.size > MAX_ENTRIES) this.unknown.clear();
      this.unknown.set(cacheKey, Date.now() + this.negativeTtlMs);
    }
    return credential;
  }

  /** Drops cached credentials of a company (all of them when no company is given), and every cached unknown key. */
  invalidate(empresaId?: number): void {
    this.generation += 1;
    this.unknown.clear();
    if (empresaId === undefined) return this.cache.clear();
    for (const [k, v] of this.cache) if (v.credential.empresa.id === empresaId) this.cache.delete(k);
  }
}
