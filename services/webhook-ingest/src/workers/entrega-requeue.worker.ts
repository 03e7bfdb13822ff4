import type { Kysely } from 'kysely';
import { enqueueEvent, type Logger } from '@erp/bus';
import { webhookIntakeEvents } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { startPeriodic, type Worker } from '@erp/runtime';
import { takeStaleRecibidas } from '../db/entrega.repository';
import type { WebhookDb } from '../db/tables';

export interface EntregaRequeueOptions {
  db: Kysely<WebhookDb>;
  logger: Logger;
  intervalMs: number;
  /** How long after its last event a delivery still `recibida` is given another (past the whole retry schedule). */
  afterMs: number;
  /** Deliveries requeued per transaction. */
  batchSize?: number;
  /** Told how many deliveries a sweep requeued (metrics), and to publish their events now. */
  onRequeued: (count: number) => void;
}

/**
 * The last guard of "a delivery answered 200 is processed": its `delivery.received` event is
 * recorded with it and retried by the consumer, but an event that never comes back (lost by the
 * stream, or terminated while the delivery could not be marked failed) would leave the delivery
 * `recibida` forever. Such a delivery gets a new event once `afterMs` has passed since its last
 * one; processing takes only a `recibida` delivery under its row lock, so an event that was merely
 * slow and arrives as well changes nothing. Replicas may sweep at once (`SKIP LOCKED`).
 */
export function startEntregaRequeue(options: EntregaRequeueOptions): Worker {
  const { db, logger } = options;
  const batchSize = options.batchSize ?? 100;
  return startPeriodic('delivery requeue', options.intervalMs, logger, async (stopped) => {
    for (let n = batchSize; n === batchSize && !stopped();) {
      const requeued = await inTransaction(db, async (trx) => {
        const stale = await takeStaleRecibidas(trx, options.afterMs, batchSize);
        for (const { id, empresa_id } of stale) {
          await enqueueEvent(trx, webhookIntakeEvents, 'intake.webhooks.delivery.received', { id_entrega: id, empresa_id });
        }
        return stale;
      });
      n = requeued.length;
      if (n === 0) break;
      logger.warn({ entregas: requeued.map((e) => e.id) }, 'deliveries still waiting long after their event: requeued');
      options.onRequeued(n);
    }
  });
}
