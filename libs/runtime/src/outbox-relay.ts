import type { Kysely } from 'kysely';
import { publishOutbox, purgeOutbox, type Bus } from '@erp/bus';
import { startLoop } from './periodic';
import type { Worker } from './worker';

export interface OutboxRelayOptions {
  // Any service's schema: the relay reads only the outbox every schema has.
  db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  bus: Bus;
  pollMs?: number;
  batchSize?: number;
  /** Published rows older than this are deleted (JetStream's dedup window is far shorter). */
  retentionMs?: number;
}

/** How often published rows past their retention are deleted. */
const PURGE_EVERY_MS = 60_000;

/**
 * Publishes the schema's outbox (`publishOutbox`) every `pollMs`, at once when nudged after a
 * commit that enqueued events, and deletes published rows past their retention once a minute.
 * A failed pass is logged and tried again at the next poll.
 */
export function startOutboxRelay(options: OutboxRelayOptions): Required<Worker> {
  const { db, bus } = options;
  const pollMs = options.pollMs ?? 500;
  let lastPurge = 0;
  return startLoop('outbox relay', { retryMs: pollMs, logger: bus.logger }, async () => {
    await publishOutbox(db, bus, options.batchSize);
    if (Date.now() - lastPurge > PURGE_EVERY_MS) {
      lastPurge = Date.now();
      await purgeOutbox(db, new Date(Date.now() - (options.retentionMs ?? 24 * 3600_000)));
    }
    return pollMs;
  });
}
