import type { Kysely } from 'kysely';
import { settledSequence, startConsumer, type Bus, type Logger } from '@erp/bus';
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
import { GatheredWrites, type Worker } from '@erp/runtime';
import { receiveEventos } from '../db/evento.repository';
import type { SubscriptionsDb } from '../db/tables';
import { partnerEventsOf, type PartnerEventDraft } from '../domain/partner-events';
import { startEventSequencer } from '../workers/event-sequencer.worker';

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

/** Source events handled at once: their partner events are recorded together, in one transaction. */
const BATCH = 64;

/**
 * How long the first partner event queued waits for others before they are written: events
 * arrive one or two per sale, and a few milliseconds make one statement of a second's worth.
 */
const RECEIVE_WINDOW_MS = 25;

/**
 * Pause before each redelivery of an event whose write failed. A write fails when the database is
 * away, and one attempt of a batch costs one refused connection: short steps put the events in
 * the log within 5 s of its return, where the default schedule (a minute from the fifth failure on)
 * kept them out of it for up to a minute after a 20 s restart.
 */
const LOG_BACKOFF_MS = [250, 1_000, 2_000, 5_000];

/**
 * Feeds the company event log from the stream. One durable over `events.>` (one filter subject
 * works on every JetStream server). Up to `BATCH` events are in hand at once; each handler queues
 * its partner events, everything queued within `RECEIVE_WINDOW_MS` or while a write is under way is
 * received in one statement, and the event is acknowledged once that committed. Received events enter the log only in stream order, once
 * every earlier event is settled (`startEventSequencer`): a redelivery that brings an event back
 * after later ones were handled puts it before them all the same. Partner ids derive from the source
 * event's id, so a redelivered event writes nothing twice. `onOwed` tells this process's
 * dispatcher that deliveries are owed (other replicas poll). Answers the sequencer, the worker to
 * register.
 */
export async function startSourceEventsConsumer(
  db: Kysely<SubscriptionsDb>,
  bus: Bus,
  options: { logger: Logger; pollMs: number; onOwed: () => void },
): Promise<Worker> {
  const sequencer = startEventSequencer({
    db,
    settled: await settledSequence(bus, EVENT_LOG_CONSUMER),
    logger: options.logger,
    onOwed: options.onOwed,
    pollMs: options.pollMs,
  });
  // The partner events of the events handled together are received in one statement
  // (`GatheredWrites`: an event the database refuses, a value out of its range, fails and is
  // terminated alone instead of taking every event written with it down too).
  const log = new GatheredWrites<readonly PartnerEventDraft[]>({
    windowMs: RECEIVE_WINDOW_MS,
    maxBatch: BATCH,
    write: async (batch) => {
      // A redelivered event may sit in the same batch as its first delivery: one row per id.
      await receiveEventos(db, [...new Map(batch.flat().map((d) => [d.id, d])).values()]);
      // Also when every one was received before: the first copy's handler may have died before its
      // acknowledgement, and this one's is what lets them into the log.
      sequencer.nudge();
    },
  });
  try {
    await startConsumer(bus, {
      durable: EVENT_LOG_CONSUMER,
      events: ALL_EVENTS,
      subjects: ['events.>'],
      concurrency: BATCH,
      backoffMs: LOG_BACKOFF_MS,
      handler: async (subject, payload, meta) => {
        const drafts = partnerEventsOf({ subject, payload, eventId: meta.eventId, streamSequence: meta.streamSequence });
        if (drafts.length > 0) await log.add(drafts);
      },
    });
  } catch (err) {
    await sequencer.stop();
    throw err;
  }
  return sequencer;
}
