import type { Kysely } from 'kysely';
import { startConsumer, type Bus } from '@erp/bus';
import { webhookEvents, type ConsumerName } from '@erp/contracts';
import type { WebhookDb } from '../db/tables';
import { processDelivery, type ProcessResult } from '../flows/process-delivery.flow';
import type { IntakePace } from '../workers/intake-pace.worker';
import type { ProcessingDeps } from '../flows/process-order.flow';

export const DELIVERY_CONSUMER: ConsumerName<'webhook-ingest'> = 'webhook-ingest-deliveries';

export interface DeliveryConsumerOptions {
  concurrency: number;
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
 * delivery as failed with its reason. Up to `concurrency` events are taken at once; each waits for
 * its turn from `pace`, so processing yields to a burst being received.
 */
export async function startDeliveryConsumer(
  db: Kysely<WebhookDb>,
  bus: Bus,
  deps: ProcessingDeps,
  options: DeliveryConsumerOptions,
): Promise<void> {
  await startConsumer(bus, {
    durable: DELIVERY_CONSUMER,
    events: webhookEvents,
    subjects: ['events.webhooks.delivery.received'],
    concurrency: options.concurrency,
    backoffMs: options.backoffMs,
    maxDeliver: options.maxDeliver,
    handler: async (_subject, event, meta) => {
      const release = await options.pace.acquire();
      try {
        const outcome = await processDelivery(db, deps, event.id_entrega, {
          attempt: meta.deliveryCount,
          lastAttempt: meta.deliveryCount >= options.maxDeliver,
          logger: bus.logger,
        });
        options.onProcessed?.(outcome);
      } finally {
        release();
      }
    },
  });
}
