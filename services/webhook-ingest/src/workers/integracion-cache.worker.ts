import type { Kysely } from 'kysely';
import { findIntegracionByTokenHash } from '../db/integracion.repository';
import type { WebhookDb } from '../db/tables';
import { hashToken } from '../domain/token';

export type Integracion = NonNullable<Awaited<ReturnType<typeof findIntegracionByTokenHash>>>;

/** Tokens each cache keeps at most; past it the cache starts over rather than grow without bound. */
const MAX_ENTRIES = 10_000;

/**
 * The integration of each token presented, remembered for `ttlMs` so a burst of deliveries asks
 * Postgres once; an unknown token is remembered as unknown for as long, so a platform retrying a
 * dead URL costs no query each time. A change of an integration (its token rotated, a new one
 * created) is applied with `invalidate` at once in the replica that made it and announced to the
 * others by an event; the TTL bounds how stale a replica that missed the event can be.
 * Concurrent lookups of one token share one query.
 */
export class IntegracionCache {
  private readonly entries = new Map<string, { integracion: Integracion | null; expires: number }>();
  private readonly loading = new Map<string, Promise<Integracion | null>>();
  /** Bumped by every invalidation: a lookup started before one does not store what it read. */
  private generation = 0;

  constructor(
    private readonly db: Kysely<WebhookDb>,
    private readonly ttlMs: number,
  ) {}

  /** The integration of the token's hash (whatever its state: the caller checks it is active and of the platform), or null. */
  async find(token: string): Promise<Integracion | null> {
    const hash = hashToken(token);
    const key = hash.toString('base64');
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.integracion;
    const inFlight = this.loading.get(key);
    if (inFlight) return inFlight;
    const generation = this.generation;
    const load = findIntegracionByTokenHash(this.db, hash)
      .then((row) => {
        const integracion = row ?? null;
        if (this.ttlMs > 0 && generation === this.generation) {
          if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
          this.entries.set(key, { integracion, expires: Date.now() + this.ttlMs });
        }
        return integracion;
      })
      .finally(() => {
        if (this.loading.get(key) === load) this.loading.delete(key);
      });
    this.loading.set(key, load);
    return load;
  }

  /** Forgets every token: unknown ones (a new token may now exist) and known ones (one may have been replaced). */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }
}
