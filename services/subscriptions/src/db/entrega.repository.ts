import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { PageRequest } from '@erp/contracts';
import type { IntentosTable, SubscriptionsDb } from './tables';

type Db = Kysely<SubscriptionsDb> | Transaction<SubscriptionsDb>;

export interface DueEntrega {
  id: number;
  suscripcion_id: number;
}

/**
 * Deliveries that may go now: due, not held by a live sender, their subscription enabled, and no
 * earlier delivery of the same resource still owed to that subscription (order per resource).
 */
export async function dueEntregas(db: Db, limit: number): Promise<DueEntrega[]> {
  const { rows } = await sql<DueEntrega>`
    select e.id, e.suscripcion_id
    from ${sql.table('subscriptions.entregas')} e
    join ${sql.table('subscriptions.suscripciones')} s on s.id = e.suscripcion_id and s.enable
    where e.estado = 'pendiente' and e.proximo_intento_at <= now() and (e.tomada_hasta is null or e.tomada_hasta < now())
      and not exists (
        select 1 from ${sql.table('subscriptions.entregas')} p
        where p.suscripcion_id = e.suscripcion_id and p.recurso = e.recurso and p.estado = 'pendiente' and p.orden < e.orden
      )
    order by e.orden
    limit ${limit}`.execute(db);
  return rows;
}

export interface TakenEntrega {
  id: number;
  suscripcion_id: number;
  evento_id: string;
  intentos: number;
  primer_fallo_at: Date | null;
  url: string;
  secreto: string;
  tipo: string;
  ocurrido_at: Date;
  data: Record<string, unknown>;
}

/** Holds a delivery for this sender until `leaseMs` from now; undefined when another took it first. */
export async function takeEntrega(db: Db, id: number, leaseMs: number): Promise<TakenEntrega | undefined> {
  const { rows } = await sql<TakenEntrega>`
    with taken as (
      update ${sql.table('subscriptions.entregas')} set tomada_hasta = now() + ${`${leaseMs} milliseconds`}::interval
      where id = ${id} and estado = 'pendiente' and (tomada_hasta is null or tomada_hasta < now())
      returning id, suscripcion_id, evento_id, intentos, primer_fallo_at
    )
    select t.*, s.url, s.secreto, ev.tipo, ev.ocurrido_at, ev.data
    from taken t
    join ${sql.table('subscriptions.suscripciones')} s on s.id = t.suscripcion_id
    join ${sql.table('subscriptions.eventos')} ev on ev.id = t.evento_id`.execute(db);
  return rows[0];
}

export async function markEntregada(db: Db, id: number): Promise<void> {
  await db
    .updateTable('entregas')
    .set((eb) => ({ estado: 'entregada', entregada_at: new Date(), tomada_hasta: null, intentos: eb('intentos', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function markFallida(db: Db, id: number, next: Date, primerFallo: Date): Promise<void> {
  await db
    .updateTable('entregas')
    .set((eb) => ({ proximo_intento_at: next, primer_fallo_at: primerFallo, tomada_hasta: null, intentos: eb('intentos', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export type IntentoInput = Omit<Selectable<IntentosTable>, 'id' | 'created_at'>;

/** Records an attempt; nothing when the subscription was deleted meanwhile. */
export async function recordIntento(db: Db, intento: IntentoInput): Promise<void> {
  await sql`
    insert into ${sql.table('subscriptions.intentos')} (suscripcion_id, evento_id, tipo, intento, status, error, duracion_ms)
    select ${intento.suscripcion_id}, ${intento.evento_id}, ${intento.tipo}, ${intento.intento}, ${intento.status}, ${intento.error}, ${intento.duracion_ms}
    where exists (select 1 from ${sql.table('subscriptions.suscripciones')} where id = ${intento.suscripcion_id})`.execute(db);
}

/** The subscription's attempts, newest first. */
export async function listIntentos(db: Db, suscripcionId: number, page: PageRequest) {
  const [count, items] = await Promise.all([
    db
      .selectFrom('intentos')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('suscripcion_id', '=', suscripcionId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('intentos')
      .selectAll()
      .where('suscripcion_id', '=', suscripcionId)
      .orderBy('id', 'desc')
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page)
      .execute(),
  ]);
  return { total: count.n, items };
}

/**
 * What enabled subscriptions are still owed, and how long ago the oldest owed event happened (for
 * metrics). A disabled subscription's deliveries wait for it to be enabled again and count apart.
 */
export async function entregaBacklog(db: Db): Promise<{ pending: number; oldestAgeSeconds: number }> {
  const { rows } = await sql<{ pending: number; oldest: number }>`
    select count(*)::int as pending, coalesce(extract(epoch from now() - min(ev.ocurrido_at)), 0)::float8 as oldest
    from ${sql.table('subscriptions.entregas')} e
    join ${sql.table('subscriptions.suscripciones')} s on s.id = e.suscripcion_id and s.enable
    join ${sql.table('subscriptions.eventos')} ev on ev.id = e.evento_id
    where e.estado = 'pendiente'`.execute(db);
  return { pending: rows[0]?.pending ?? 0, oldestAgeSeconds: rows[0]?.oldest ?? 0 };
}
