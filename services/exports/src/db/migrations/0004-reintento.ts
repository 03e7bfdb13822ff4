import type { Kysely } from 'kysely';

/**
 * When a queued job's next attempt may start: an attempt that failed (its owner unreachable, a
 * database restarting) is tried again after a pause that grows with each attempt, so a short
 * outage does not use up the attempts. Null: at once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('exportaciones').addColumn('reintentar_at', 'timestamptz').execute();
}
