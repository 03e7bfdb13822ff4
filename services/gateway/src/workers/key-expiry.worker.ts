import { inTransaction } from '@erp/db';
import type { OutboxRelay } from '@erp/bus';
import type { Kysely } from 'kysely';
import { startPeriodic, type AppLogger, type Worker } from '@erp/runtime';
import { claimExpiringApiKeys } from '../db/api-key.repository';
import type { GatewayDb } from '../db/tables';
import { announceKeyChange } from '../handlers/api-keys.handlers';

/** How long before its expiry a key's company is told (the partner event `api_key.expiring`). */
export const EXPIRY_NOTICE_MS = 7 * 24 * 3600_000;

/**
 * Every `intervalMs`, announces once each key that expires within seven days: the mark and the
 * event are written in one transaction, so several replicas announce a key once between them.
 */
export function startKeyExpiryNotices(db: Kysely<GatewayDb>, relay: OutboxRelay, logger: AppLogger, intervalMs: number): Worker {
  return startPeriodic('API key expiry notices', intervalMs, logger, async () => {
    const announced = await inTransaction(db, async (trx) => {
      const keys = await claimExpiringApiKeys(trx, EXPIRY_NOTICE_MS);
      for (const key of keys) await announceKeyChange(trx, key.empresa_id, 'expiring', key, null);
      return keys.length;
    });
    if (announced > 0) {
      relay.nudge();
      logger.info({ announced }, 'API keys about to expire announced');
    }
  });
}
