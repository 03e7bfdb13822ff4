import { sql, type Kysely } from 'kysely';

/**
 * What the dispatcher needs to keep up and stay fair, and secret rotation:
 * - `entregas_cola_idx`: a subscription's owed deliveries in stream order, so each claim reads the
 *   head of every subscription's queue (a bounded window) instead of the whole waiting queue.
 *   Room left in each page (fillfactor) lets most leases be written in place (HOT updates).
 * - `fallos_seguidos`, `pausada_hasta`: an endpoint that fails is paused as a whole (growing with
 *   its consecutive failures) instead of being tried once per owed resource.
 * - `secreto_anterior`, `secreto_anterior_hasta`: after a rotation deliveries carry both signatures
 *   until then (Standard Webhooks allows several).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('suscripciones')
    .addColumn('fallos_seguidos', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pausada_hasta', 'timestamptz')
    .addColumn('secreto_anterior', 'text')
    .addColumn('secreto_anterior_hasta', 'timestamptz')
    .execute();
  await sql`alter table entregas set (fillfactor = 70)`.execute(db);
  await sql`create index entregas_cola_idx on entregas (suscripcion_id, orden) where estado = 'pendiente'`.execute(db);
}
