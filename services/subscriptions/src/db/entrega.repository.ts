import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { PageRequest } from '@erp/contracts';
import type { IntentosTable, SubscriptionsDb } from './tables';

type Db = Kysely<SubscriptionsDb> | Transaction<SubscriptionsDb>;

export interface ClaimLimits {
  /** Lanes (deliveries in flight at once) this process may still open, overall. */
  lanes: number;
  /** Lanes per subscription, and those already open in this process by subscription id. */
  lanesPerSuscripcion: number;
  busy: ReadonlyMap<number, number>;
  /** Deliveries one lane carries at most per claim, sent one after another. */
  laneLength: number;
  /** Owed deliveries of each subscription looked at, from the head of its queue. */
  window: number;
  /** How long the first delivery of a lane is held; each later one is held `stepMs` longer. */
  stepMs: number;
}

export interface ClaimedEntrega {
  id: number;
  suscripcion_id: number;
  /** Deliveries of one subscription with the same lane go out one after another, in `orden`. */
  carril: number;
  evento_id: string;
  recurso: string;
  orden: number;
  intentos: number;
  primer_fallo_at: Date | null;
  url: string;
  secreto: string;
  /** The secret before a rotation, while deliveries are still signed with it too. */
  secreto_anterior: string | null;
  tipo: string;
  ocurrido_at: Date;
  data: Record<string, unknown>;
}

/**
 * Holds the deliveries that may go now and splits them into lanes. For every enabled subscription
 * that is not paused and has a free lane, it reads only the head of its queue (`window` owed
 * deliveries in stream order, by `entregas_cola_idx`), so the work is proportional to what is
 * sent, never to the queue's length. A delivery may go when it and every earlier owed delivery of
 * its resource are due and not held: each resource's prefix. A resource's deliveries share one
 * lane (order per resource); subscriptions are served fewest busy lanes first, then oldest head,
 * each with at most its free lanes, and all of them with at most `lanes`. Claims are serialised (one advisory lock) so
 * two replicas never split a resource's prefix between them.
 */
export async function claimEntregas(trx: Transaction<SubscriptionsDb>, limits: ClaimLimits): Promise<ClaimedEntrega[]> {
  if (limits.lanes <= 0) return [];
  await sql`select pg_advisory_xact_lock(hashtext('subscriptions.entregas.claim'))`.execute(trx);
  const busyIds = [...limits.busy.keys()];
  const busyLanes = busyIds.map((id) => limits.busy.get(id)!);
  const { rows } = await sql<ClaimedEntrega>`
    with ocupadas as (
      select * from unnest(${busyIds}::int[], ${busyLanes}::int[]) as o(suscripcion_id, carriles)
    ),
    activas as (
      select s.id, ${limits.lanesPerSuscripcion}::int - coalesce(o.carriles, 0) as libres
      from ${sql.table('subscriptions.suscripciones')} s
      left join ocupadas o on o.suscripcion_id = s.id
      where s.enable and (s.pausada_hasta is null or s.pausada_hasta <= now())
        and ${limits.lanesPerSuscripcion}::int - coalesce(o.carriles, 0) > 0
    ),
    ventana as (
      select a.id as suscripcion_id, a.libres, e.id, e.recurso, e.orden,
        e.proximo_intento_at <= now() and (e.tomada_hasta is null or e.tomada_hasta < now()) as libre
      from activas a
      cross join lateral (
        select e.id, e.recurso, e.orden, e.proximo_intento_at, e.tomada_hasta
        from ${sql.table('subscriptions.entregas')} e
        where e.suscripcion_id = a.id and e.estado = 'pendiente'
        order by e.orden
        limit ${limits.window}
      ) e
    ),
    prefijos as (
      select v.*, bool_and(v.libre) over (partition by v.suscripcion_id, v.recurso order by v.orden) as puede
      from ventana v
    ),
    candidatas as (
      select p.*, row_number() over (partition by p.suscripcion_id order by p.orden) as n
      from prefijos p
      where p.puede
    ),
    recursos as (
      select suscripcion_id, recurso, min(orden) as cabeza, min(libres) as libres
      from candidatas
      where n <= libres * ${limits.laneLength}::int
      group by suscripcion_id, recurso
    ),
    por_suscripcion as (
      select suscripcion_id, min(libres) as libres, least(min(libres), count(*))::int as carriles, min(cabeza) as cabeza
      from recursos
      group by suscripcion_id
    ),
    -- When lanes run short, subscriptions with fewer lanes busy here go first (a slow endpoint
    -- holding its lanes does not take the last free ones from an idle subscription), then oldest head.
    cupo as (
      select suscripcion_id,
        greatest(0, least(carriles, ${limits.lanes}::int - (sum(carriles) over (order by libres desc, cabeza, suscripcion_id) - carriles)))::int as carriles
      from por_suscripcion
    ),
    asignados as (
      select r.suscripcion_id, r.recurso,
        ((dense_rank() over (partition by r.suscripcion_id order by r.cabeza) - 1) % c.carriles)::int as carril
      from recursos r
      join cupo c on c.suscripcion_id = r.suscripcion_id and c.carriles > 0
    ),
    elegidas as (
      select c.id, a.carril, row_number() over (partition by c.suscripcion_id, a.carril order by c.orden) as posicion
      from candidatas c
      join asignados a on a.suscripcion_id = c.suscripcion_id and a.recurso = c.recurso
    ),
    tomadas as (
      update ${sql.table('subscriptions.entregas')} e
      set tomada_hasta = now() + make_interval(secs => (el.posicion * ${limits.stepMs}::int + 5000) / 1000.0)
      from elegidas el
      where e.id = el.id and el.posicion <= ${limits.laneLength}::int and e.estado = 'pendiente'
      returning e.id, e.suscripcion_id, el.carril, e.evento_id, e.recurso, e.orden, e.intentos, e.primer_fallo_at
    )
    select t.id, t.suscripcion_id, t.carril, t.evento_id, t.recurso, t.orden, t.intentos, t.primer_fallo_at,
      s.url, s.secreto, case when s.secreto_anterior_hasta > now() then s.secreto_anterior end as secreto_anterior,
      ev.tipo, ev.ocurrido_at, ev.data
    from tomadas t
    join ${sql.table('subscriptions.suscripciones')} s on s.id = t.suscripcion_id
    join ${sql.table('subscriptions.eventos')} ev on ev.id = t.evento_id
    order by t.suscripcion_id, t.carril, t.orden`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id), orden: Number(r.orden) }));
}

export type IntentoInput = Omit<Selectable<IntentosTable>, 'id' | 'created_at'>;

/** What sending a batch of lanes came to, written at once. */
export interface DispatchOutcome {
  intentos: readonly IntentoInput[];
  entregadas: readonly number[];
  /** Held but not sent (their lane stopped at a failure): free to be claimed again. */
  liberadas: readonly number[];
  fallidas: ReadonlyArray<{ id: number; proximo: Date; primerFallo: Date }>;
  /** Subscriptions that answered 2xx: their run of failures ends. */
  sanas: readonly number[];
}

/** Records a batch of attempts and their effect on the deliveries, in a few statements whatever its size. */
export async function recordOutcome(trx: Transaction<SubscriptionsDb>, outcome: DispatchOutcome): Promise<void> {
  const { intentos } = outcome;
  if (intentos.length > 0) {
    // A subscription deleted meanwhile records nothing (the join drops it).
    await sql`
      insert into ${sql.table('subscriptions.intentos')} (suscripcion_id, evento_id, tipo, intento, status, error, duracion_ms)
      select u.suscripcion_id, u.evento_id, u.tipo, u.intento, u.status, u.error, u.duracion_ms
      from unnest(
        ${intentos.map((i) => i.suscripcion_id)}::int[], ${intentos.map((i) => i.evento_id)}::text[], ${intentos.map((i) => i.tipo)}::text[],
        ${intentos.map((i) => i.intento)}::int[], ${intentos.map((i) => i.status)}::int[], ${intentos.map((i) => i.error)}::text[],
        ${intentos.map((i) => i.duracion_ms)}::int[]
      ) with ordinality as u(suscripcion_id, evento_id, tipo, intento, status, error, duracion_ms, n)
      join ${sql.table('subscriptions.suscripciones')} s on s.id = u.suscripcion_id
      order by u.n`.execute(trx);
  }
  // Only deliveries still held: one a replay queued again while it was being sent (its hold
  // cleared) is owed once more.
  if (outcome.entregadas.length > 0)
    await trx
      .updateTable('entregas')
      .set((eb) => ({ estado: 'entregada', entregada_at: new Date(), tomada_hasta: null, intentos: eb('intentos', '+', 1) }))
      .where('id', '=', sql<number>`any(${outcome.entregadas}::bigint[])`)
      .where('tomada_hasta', 'is not', null)
      .execute();
  if (outcome.liberadas.length > 0)
    await trx
      .updateTable('entregas')
      .set({ tomada_hasta: null })
      .where('id', '=', sql<number>`any(${outcome.liberadas}::bigint[])`)
      .where('estado', '=', 'pendiente')
      .execute();
  for (const f of outcome.fallidas)
    await trx
      .updateTable('entregas')
      .set((eb) => ({
        proximo_intento_at: f.proximo,
        primer_fallo_at: f.primerFallo,
        tomada_hasta: null,
        intentos: eb('intentos', '+', 1),
      }))
      .where('id', '=', f.id)
      .where('tomada_hasta', 'is not', null)
      .execute();
  if (outcome.sanas.length > 0)
    await trx
      .updateTable('suscripciones')
      .set({ fallos_seguidos: 0, pausada_hasta: null })
      .where('id', '=', sql<number>`any(${outcome.sanas}::int[])`)
      .where('fallos_seguidos', '>', 0)
      .execute();
}

/**
 * Pauses a subscription whose endpoint failed: the pause grows with its run of failures (the retry
 * schedule's entry), so a dead endpoint is tried a few times per pause instead of once per owed
 * resource. Failures of deliveries already in flight while it is paused do not lengthen the run.
 */
export async function pauseSuscripcion(db: Db, id: number, schedule: readonly number[]): Promise<void> {
  await sql`
    update ${sql.table('subscriptions.suscripciones')}
    set fallos_seguidos = fallos_seguidos + 1,
      pausada_hasta = now() + make_interval(secs => (${schedule}::int[])[least(fallos_seguidos + 1, ${schedule.length}::int)] / 1000.0)
    where id = ${id} and (pausada_hasta is null or pausada_hasta <= now())`.execute(db);
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
  // An event received and not in the log yet (it waits for an earlier one still unsettled) is
  // owed too: to the log, then to the subscriptions that asked for it.
  const { rows } = await sql<{ pending: number; oldest: number }>`
    select count(*)::int as pending,
      greatest(
        coalesce(extract(epoch from now() - min(ev.ocurrido_at)), 0),
        coalesce((select extract(epoch from now() - min(r.recibido_at)) from ${sql.table('subscriptions.eventos_recibidos')} r), 0)
      )::float8 as oldest
    from ${sql.table('subscriptions.entregas')} e
    join ${sql.table('subscriptions.suscripciones')} s on s.id = e.suscripcion_id and s.enable
    join ${sql.table('subscriptions.eventos')} ev on ev.id = e.evento_id
    where e.estado = 'pendiente'`.execute(db);
  return { pending: rows[0]?.pending ?? 0, oldestAgeSeconds: rows[0]?.oldest ?? 0 };
}
