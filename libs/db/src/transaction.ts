import type { Kysely, Transaction } from 'kysely';
import { pgErrorKind } from './errors';

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /** Attempts for serialization failures and deadlocks, which are safe to retry whole. */
  attempts?: number;
}

/** Pause before the one retry of a transaction whose connection could not be had (a failover moving the primary). */
export const UNSTARTED_RETRY_DELAY_MS = 500;

/**
 * Runs `fn` in a transaction, retrying it whole on serialization failures and deadlocks
 * (with a short jittered pause), so callers never see a 40001 that a retry would have fixed.
 * A transaction that could not begin (no connection to be had, or one the server had already
 * ended: a failover moving the primary) is tried once more after UNSTARTED_RETRY_DELAY_MS: nothing
 * of it reached the server, so the retry is safe whatever `fn` writes. One that failed after `fn`
 * began is not: its outcome is the caller's to report (503, and the partner retries it with its
 * idempotency key).
 */
export async function inTransaction<DB, T>(
  db: Kysely<DB>,
  fn: (trx: Transaction<DB>) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 5;
  let unstartedRetried = false;
  for (let attempt = 1; ; attempt++) {
    let began = false;
    try {
      const builder = options.isolation ? db.transaction().setIsolationLevel(options.isolation) : db.transaction();
      return await builder.execute((trx) => {
        began = true;
        return fn(trx);
      });
    } catch (err) {
      const kind = pgErrorKind(err);
      if ((kind === 'serialization_failure' || kind === 'deadlock') && attempt < attempts) {
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20));
        continue;
      }
      if (kind === 'unavailable' && !began && !unstartedRetried) {
        unstartedRetried = true;
        await new Promise((resolve) => setTimeout(resolve, UNSTARTED_RETRY_DELAY_MS));
        continue;
      }
      throw err;
    }
  }
}
