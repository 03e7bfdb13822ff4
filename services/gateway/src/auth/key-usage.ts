import type { Kysely } from 'kysely';
import { recordApiKeyUsage, type ApiKeyUsage } from '../db/api-key.repository';
import type { GatewayDb } from '../db/tables';

const HOUR_MS = 3600_000;

/**
 * The hour and client address of each key's last use, kept in memory and written in batches: a
 * request costs a map update, and a key used all hour from one address costs one write an hour.
 */
export class KeyUsage {
  /** What was last written (or is about to be) per key, as `hour|address`. */
  private readonly written = new Map<number, string>();
  private pending = new Map<number, ApiKeyUsage>();

  constructor(private readonly db: Kysely<GatewayDb>) {}

  touch(apiKeyId: number, address: string, now = Date.now()): void {
    const hour = Math.floor(now / HOUR_MS) * HOUR_MS;
    const mark = `${hour}|${address}`;
    if (this.written.get(apiKeyId) === mark) return;
    this.written.set(apiKeyId, mark);
    this.pending.set(apiKeyId, { id: apiKeyId, ultimo_uso: new Date(hour), ultima_direccion: address });
  }

  /** Writes what changed since the last flush in one statement; what fails is tried again next time. */
  async flush(): Promise<number> {
    if (this.pending.size === 0) return 0;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await recordApiKeyUsage(this.db, [...batch.values()]);
    } catch (err) {
      for (const [id, usage] of batch) if (!this.pending.has(id)) this.pending.set(id, usage);
      throw err;
    }
    return batch.size;
  }
}
