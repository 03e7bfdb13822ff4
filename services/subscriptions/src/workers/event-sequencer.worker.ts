import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import { inTransaction } from '@erp/db';
import { startLoop, type Worker } from '@erp/runtime';
import { hasReceivedEventos, logReceivedEventos } from '../db/evento.repository';
import type { SubscriptionsDb } from '../db/tables';
import { ordenAfter } from '../domain/partner-events';

export interface EventSequencerOptions {
  db: Kysely<SubscriptionsDb>;
  /** The stream sequence the event log's consumer has settled through (its ack floor). */
  settled: () => Promise<number>;
  logger: Logger;
  /** Events entered the log that subscriptions are owed: the dispatcher has deliveries to make. */
  onOwed: () => void;
  /** How often received events are looked for without a nudge (another replica received them). */
  pollMs: number;
}

/**
 * Pauses while received events wait for the acknowledgement of their own handling (milliseconds)
 * or for an earlier event still unsettled: a retry of a failed write (up to seconds), or one held
 * by a replica that died (up to the ack wait).
 */
const WAIT_MS = [5, 10, 25, 50, 100, 250];

/**
 * How long a nudge waits before the pass it asks for: the events received meanwhile, and the
 * acknowledgements of those before, go in the same pass (one look at the ack floor, one
 * transaction) instead of one pass per batch received.
 */
const NUDGE_COALESCE_MS = 50;

/**
 * Puts received partner events into the company logs in stream order. The consumer handles many
 * events at once and a redelivery brings an event back after later ones were handled; an event
 * enters the log only when every event before it on the stream has been settled (the consumer's
 * ack floor has passed it), and then in stream order. So the feed's positions and each resource's
 * deliveries follow the order the events happened in, whichever replica handled each and however
 * many times. `nudge()` when events were received; the pass follows within `NUDGE_COALESCE_MS`.
 */
export function startEventSequencer(options: EventSequencerOptions): Required<Worker> {
  const { db, settled, logger, onOwed, pollMs } = options;
  let received = false;
  let waits = 0;
  let coalescing: NodeJS.Timeout | undefined;
  const loop = startLoop('moving received events into the log', { retryMs: WAIT_MS.at(-1)!, logger }, async () => {
    const look = received || waits > 0;
    received = false;
    if (!look && !(await hasReceivedEventos(db))) return pollMs;
    const horizon = ordenAfter(await settled());
    const moved = await inTransaction(db, (trx) => logReceivedEventos(trx, horizon));
    if (moved.owed > 0) onOwed();
    waits = moved.waiting ? waits + 1 : 0;
    return waits > 0 ? WAIT_MS[Math.min(waits, WAIT_MS.length) - 1]! : pollMs;
  });
  return {
    nudge() {
      received = true;
      coalescing ??= setTimeout(() => {
        coalescing = undefined;
        loop.nudge();
      }, NUDGE_COALESCE_MS);
    },
    stop: () => {
      clearTimeout(coalescing);
      return loop.stop();
    },
  };
}
