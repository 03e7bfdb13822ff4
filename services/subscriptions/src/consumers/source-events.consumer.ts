import type { Kysely } from 'kysely';
import { startConsumer, type Bus } from '@erp/bus';
import {
  exportsEvents,
  gatewayEvents,
  inventoryEvents,
  packagesEvents,
  returnsEvents,
  salesEvents,
  webhookEvents,
  type ConsumerName,
  type EventCatalog,
} from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { recordEventos } from '../db/evento.repository';
import type { SubscriptionsDb } from '../db/tables';
import { partnerEventsOf } from '../domain/partner-events';

/** Every event of the stream has its contract here: the consumer reads them all, in stream order. */
const ALL_EVENTS: EventCatalog = {
  ...gatewayEvents,
  ...webhookEvents,
  ...salesEvents,
  ...returnsEvents,
  ...packagesEvents,
  ...inventoryEvents,
  ...exportsEvents,
};

export const EVENT_LOG_CONSUMER: ConsumerName<'subscriptions'> = 'subscriptions-event-log';

/**
 * Feeds the company event log from the stream. One durable over `events.>` (one filter subject
 * works on every JetStream server) taking one event at a time keeps the log in stream order;
 * partner ids derive from the source event's id, so a redelivered event writes nothing twice.
 */
export async function startSourceEventsConsumer(db: Kysely<SubscriptionsDb>, bus: Bus): Promise<void> {
  await startConsumer(bus, {
    durable: EVENT_LOG_CONSUMER,
    events: ALL_EVENTS,
    subjects: ['events.>'],
    concurrency: 1,
    handler: async (subject, payload, meta) => {
      const drafts = partnerEventsOf({ subject, payload, eventId: meta.eventId, streamSequence: meta.streamSequence });
      if (drafts.length === 0) return;
      await inTransaction(db, (trx) => recordEventos(trx, drafts, new Date()));
    },
  });
}
