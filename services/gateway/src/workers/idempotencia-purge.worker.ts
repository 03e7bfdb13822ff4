import type { Kysely } from 'kysely';
import { startPeriodic, type AppLogger, type Worker } from '@erp/runtime';
import { purgeIdempotencia } from '../db/idempotencia.repository';
import type { GatewayDb } from '../db/tables';

/** Keys deleted per statement: short transactions, however many expired at once. */
const PURGE_BATCH = 1_000;

/**
 * Deletes the `Idempotency-Key` answers older than 24 hours, every `intervalMs`. They are already
 * ignored once expired (a new request takes the key); the purge only bounds the table.
 */
export function startIdempotenciaPurge(db: Kysely<GatewayDb>, logger: AppLogger, intervalMs: number): Worker {
  return startPeriodic('idempotency key purge', intervalMs, logger, async (stopped) => {
    let purged = 0;
    for (let n = PURGE_BATCH; n === PURGE_BATCH && !stopped();) {
      n = await purgeIdempotencia(db, PURGE_BATCH);
      purged += n;
    }
    if (purged > 0) logger.info({ purged }, 'expired idempotency keys purged');
  });
}
