import type { Kysely, Transaction } from 'kysely';
import { pgErrorKind } from './errors';

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /** Attempts for serialization failures and deadlocks, which are safe to retry whole. */
  attempts?: number;
}

/**
 * Runs `fn` in a transaction, retrying it whole on serialization failures and deadlocks
 * (with a short jittered pause), so callers never see a 40001 that a retry would have fixed.
 */
export async function inTransaction<DB, T>(
  db: Kysely<DB>,
  fn: (trx: Transaction<DB>) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      const builder = options.isolation ? db.transaction().setIsolationLevel(options.isolation) : db.transaction();
      return await builder.execute(fn);
    } catch (err) {
      const kind = pgErrorKind(err);
      if ((kind === 'serialization_failure' || kind === 'deadlock') && attempt < attempts) {
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20));
        continue;
      }
      throw err;
    }
  }
}
