import { sql, type Kysely, type Transaction } from 'kysely';
import type { EventType } from '@erp/contracts';
import type { EventoRow } from '../domain/evento-row';
import type { PartnerEventDraft } from '../domain/partner-events';
import type { SubscriptionsDb } from './tables';

type Db = Kysely<SubscriptionsDb> | Transaction<SubscriptionsDb>;

/** The test event's type: sent to one subscription on request, never part of the company's feed. */
export const PING = 'ping';

/**
 * Keeps partner events as the stream brings them, once per id, until they can enter the log in
 * stream order (`logReceivedEventos`). A redelivered event is written again only while its first
 * copy waits; one already in the log is dropped when its turn comes.
 */
export async function receiveEventos(db: Db, drafts: readonly PartnerEventDraft[]): Promise<void> {
  if (drafts.length === 0) return;
  await db
    .insertInto('eventos_recibidos')
    .values(
      drafts.map((d) => ({
        id: d.id,
        empresa_id: d.empresaId,
        tipo: d.tipo,
        recurso: d.recurso,
        orden: d.orden,
        data: JSON.stringify(d.data),
      })),
    )
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** Whether any received event waits to enter the log. */
export async function hasReceivedEventos(db: Db): Promise<boolean> {
  return (await db.selectFrom('eventos_recibidos').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Moves the received events ordered before `ordenLimite` (every event of the stream before it has
 * been handled) into the log, in `orden`, and owes each new one to every enabled subscription of
 * its company that asked for its type. The advisory lock makes positions commit in order: the
 * feed pages by position and must never pass over one that commits later. The subscriptions owed
 * an event are locked as they are read (`for key share`): one deleted by a transaction that
 * commits meanwhile is left out instead of failing the delivery's foreign key, which would fail
 * the whole write. Answers how many entered the log, how many deliveries they owe, and whether
 * received events still wait.
 */
export async function logReceivedEventos(
  trx: Transaction<SubscriptionsDb>,
  ordenLimite: number,
): Promise<{ logged: number; owed: number; waiting: boolean }> {
  await sql`select pg_advisory_xact_lock(hashtext('subscriptions.eventos'))`.execute(trx);
  const { rows: logged } = await sql<{ id: string }>`
    with movidos as (
      delete from ${sql.table('subscriptions.eventos_recibidos')} where orden < ${ordenLimite} returning *
    )
    insert into ${sql.table('subscriptions.eventos')} (id, empresa_id, tipo, recurso, orden, ocurrido_at, data)
    select id, empresa_id, tipo, recurso, orden, recibido_at, data from movidos order by orden
    on conflict (id) do nothing
    returning id`.execute(trx);
  const ids = logged.map((r) => r.id);
  let owed = 0;
  if (ids.length > 0) {
    const { numAffectedRows } = await sql`
      insert into ${sql.table('subscriptions.entregas')} (suscripcion_id, evento_id, recurso, orden)
      select s.id, e.id, e.recurso, e.orden
      from ${sql.table('subscriptions.eventos')} e
      join ${sql.table('subscriptions.suscripciones')} s on s.empresa_id = e.empresa_id and s.enable and (e.tipo = any(s.eventos) or '*' = any(s.eventos))
      where e.id = any(${ids}::text[])
      for key share of s
      on conflict do nothing`.execute(trx);
    owed = Number(numAffectedRows ?? 0);
  }
  return { logged: ids.length, owed, waiting: await hasReceivedEventos(trx) };
}

/**
 * Records a `ping` owed to one subscription only, at the head of its queue (`orden` 0: a resource
 * of its own, so it waits for no other delivery). The feed and replays leave pings out.
 */
export async function recordPing(
  trx: Transaction<SubscriptionsDb>,
  suscripcionId: number,
  empresaId: number,
  id: string,
  ocurrido: Date,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('subscriptions.eventos'))`.execute(trx);
  await trx
    .insertInto('eventos')
    .values({
      id,
      empresa_id: empresaId,
      tipo: PING,
      recurso: `ping:${id}`,
      orden: 0,
      ocurrido_at: ocurrido,
      data: JSON.stringify({ id_suscripcion: suscripcionId, mensaje: 'Evento de prueba de la suscripción' }),
    })
    .execute();
  await trx
    .insertInto('entregas')
    .values({ suscripcion_id: suscripcionId, evento_id: id, recurso: `ping:${id}`, orden: 0 })
    .execute();
}

export async function positionOf(db: Db, empresaId: number, id: string): Promise<number | undefined> {
  const row = await db.selectFrom('eventos').select('posicion').where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
  return row?.posicion;
}

export async function listEventos(
  db: Db,
  empresaId: number,
  options: { after: number; types?: readonly EventType[]; limit: number },
): Promise<EventoRow[]> {
  let query = db
    .selectFrom('eventos')
    .selectAll()
    .where('empresa_id', '=', empresaId)
    .where('posicion', '>', options.after)
    .where('tipo', '<>', PING);
  if (options.types) query = query.where('tipo', 'in', options.types);
  return query.orderBy('posicion').limit(options.limit).execute();
}

/** Owes a subscription again every event of its types since `desde` (the same ids). */
export async function queueReplay(
  trx: Transaction<SubscriptionsDb>,
  suscripcionId: number,
  empresaId: number,
  tipos: readonly string[],
  desde: Date,
): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with owed as (
      insert into ${sql.table('subscriptions.entregas')} (suscripcion_id, evento_id, recurso, orden)
      select ${suscripcionId}, e.id, e.recurso, e.orden
      from ${sql.table('subscriptions.eventos')} e
      where e.empresa_id = ${empresaId} and e.ocurrido_at >= ${desde} and e.tipo <> ${PING} and (e.tipo = any(${tipos}::text[]) or '*' = any(${tipos}::text[]))
      on conflict (suscripcion_id, evento_id) do update
        set estado = 'pendiente', intentos = 0, proximo_intento_at = now(), primer_fallo_at = null, entregada_at = null, tomada_hasta = null
      returning 1
    )
    select count(*)::int as n from owed`.execute(trx);
  return rows[0]?.n ?? 0;
}

/** Forgets events past the retention (their deliveries go with them). */
export async function deleteEventosBefore(db: Db, cutoff: Date): Promise<void> {
  await db.deleteFrom('eventos').where('ocurrido_at', '<', cutoff).execute();
  await db.deleteFrom('intentos').where('created_at', '<', cutoff).execute();
}
