import type { Kysely } from 'kysely';
import { startConsumer, type Bus } from '@erp/bus';
import { webhookIntakeEvents, type ConsumerName } from '@erp/contracts';
import type { WebhookDb } from '../db/tables';
import { processEntrega, type ProcessResult } from '../flows/process-entrega.flow';
import type { DeliveryGrouper } from '../workers/delivery-grouper.worker';
import type { IntakePace } from '../workers/intake-pace.worker';
import type { ProcessingDeps } from '../flows/process-pedido.flow';

export const DELIVERY_CONSUMER: ConsumerName<'webhook-ingest'> = 'webhook-ingest-deliveries';

export interface DeliveryConsumerOptions {
  /** Events taken at once: those waiting for their group or their turn hold no connection. */
  concurrency: number;
  /** Processes new orders together, and one order's deliveries one after another. */
  grouper: DeliveryGrouper;
  /** Gives each processing its turn: fewer at once while deliveries arrive fast. */
  pace: IntakePace;
  backoffMs: readonly number[];
  maxDeliver: number;
  /** Told the outcome of each delivery this consumer finished (metrics). */
  onProcessed?: (outcome: ProcessResult) => void;
}

/**
 * Processes stored deliveries. Idempotent on the delivery itself (only a `recibida` one is
 * processed, under its row lock), so a redelivered event or a replay's new event is harmless.
 * Transient failures (a service down) are retried with backoff; the last attempt keeps the
 * delivery as failed with its reason. Up to `concurrency` events are taken at once. A delivery's
 * first attempt goes through the grouper (in a group, or alone after its order's earlier
 * deliveries); a retry is processed alone at once. Alone, a delivery waits for its turn from
 * `pace`, so processing yields to a burst being received.
 */
export async function startDeliveryConsumer(
  db: Kysely<WebhookDb>,
  bus: Bus,
  deps: ProcessingDeps,
  options: DeliveryConsumerOptions,
): Promise<void> {
  await startConsumer(bus, {
    durable: DELIVERY_CONSUMER,
    events: webhookIntakeEvents,
    subjects: ['intake.webhooks.delivery.received'],
    concurrency: options.concurrency,
    backoffMs: options.backoffMs,
    maxDeliver: options.maxDeliver,
    handler: async (_subject, event, meta) => {
      const alone = async () => {
        const release = await options.pace.acquire();
        try {
          return await processEntrega(db, deps, event.id_entrega, {
            attempt: meta.deliveryCount,
            lastAttempt: meta.deliveryCount >= options.maxDeliver,
            logger: bus.logger,
          });
        } finally {
          release();
        }
      };
      // A retried delivery is processed alone at once: its group, if it had one, was tried.
      const outcome = meta.deliveryCount === 1 ? await options.grouper.submit(event.id_entrega, meta.deliveryCount, alone) : await alone();
      options.onProcessed?.(outcome);
    },
  });
}
