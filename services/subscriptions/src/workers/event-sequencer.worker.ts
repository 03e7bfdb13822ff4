import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import { inTransaction } from '@erp/db';
import { hasReceivedEventos, logReceivedEventos } from '../db/evento.repository';
import type { SubscriptionsDb } from '../db/tables';
import { ordenAfter } from '../domain/partner-events';

export interface EventSequencerOptions {
  db: Kysely<SubscriptionsDb>;
  /** The stream sequence the event log's consumer has settled through (its ack floor). */
  settled: () => Promise<number>;
  logger: Logger;
  /** Events entered the log: deliveries are owed. */
  onLogged: () => void;
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
 * Puts received partner events into the company logs in stream order. The consumer handles many
 * events at once and a redelivery brings an event back after later ones were handled; an event
 * enters the log only when every event before it on the stream has been settled (the consumer's
 * ack floor has passed it), and then in stream order. So the feed's positions and each resource's
 * deliveries follow the order the events happened in, whichever replica handled each and however
 * many times.
 */
export class EventSequencer {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private nudged = false;

  constructor(private readonly options: EventSequencerOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** Events were received: look now instead of at the next poll. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { db, settled, logger, onLogged, pollMs } = this.options;
    let waits = 0;
    while (!this.stopped) {
      const nudged = this.nudged;
      this.nudged = false;
      let waiting = false;
      try {
        if (nudged || waits > 0 || (await hasReceivedEventos(db))) {
          const horizon = ordenAfter(await settled());
          const moved = await inTransaction(db, (trx) => logReceivedEventos(trx, horizon));
          if (moved.logged > 0) onLogged();
          waiting = moved.waiting > 0;
        }
      } catch (err) {
        logger.warn({ err }, 'could not move received events into the log; will retry');
        waiting = true;
      }
      waits = waiting ? waits + 1 : 0;
      if (this.nudged) continue;
      await this.sleep(waiting ? WAIT_MS[Math.min(waits - 1, WAIT_MS.length - 1)]! : pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
