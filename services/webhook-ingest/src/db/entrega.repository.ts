import { sql, type Kysely, type Transaction } from 'kysely';
import type { EntregaResumen, EstadoEntrega, RequestContext, webhookIntakeEvents } from '@erp/contracts';
import { updatePedido, type PedidoUpdate } from './pedido.repository';
import { WEBHOOK_INGEST_SCHEMA, type OrigenPedido, type WebhookDb } from './tables';

type Db = Kysely<WebhookDb> | Transaction<WebhookDb>;

export type NuevaEntrega = Pick<
  WebhookDb['entregas'],
  'integracion_id' | 'empresa_id' | 'plataforma' | 'recurso' | 'tema' | 'clave_dedup' | 'referencia' | 'cuerpo'
> & {
  /** The path that brought it; a webhook when not said. */
  origen?: OrigenPedido;
  headers: Record<string, string>;
  /** Its `intake.webhooks.delivery.received` event: outbox id, request context and trace carrier. */
  evento: { id: string; context: RequestContext; trace: Record<string, string> };
};

/**
 * Stores deliveries, each with its `intake.webhooks.delivery.received` outbox row, in one
 * statement (one commit). A (integration, dedup key) already stored is skipped; the keys must
 * be distinct within the call. Returns the ids of the ones stored, by `integracion_id:clave_dedup`.
 */
export async function insertEntregas(db: Db, rows: readonly NuevaEntrega[]): Promise<Map<string, number>> {
  const column = <T>(pick: (r: NuevaEntrega) => T): T[] => rows.map(pick);
  const { rows: stored } = await sql<{ id: number; integracion_id: number; clave_dedup: string }>`
    with entrada as (
      select * from unnest(
        ${column((r) => r.integracion_id)}::int[], ${column((r) => r.empresa_id)}::int[], ${column((r) => r.plataforma)}::text[],
        ${column((r) => r.recurso)}::text[], ${column((r) => r.tema)}::text[], ${column((r) => r.clave_dedup)}::text[],
        ${column((r) => r.referencia)}::text[], ${column((r) => JSON.stringify(r.headers))}::text[], ${column((r) => r.cuerpo)}::bytea[],
        ${column((r) => r.evento.id)}::uuid[], ${column((r) => JSON.stringify(r.evento.context))}::text[], ${column((r) => JSON.stringify(r.evento.trace))}::text[],
        ${column((r) => r.origen ?? 'webhook')}::text[]
      ) with ordinality as t(integracion_id, empresa_id, plataforma, recurso, tema, clave_dedup, referencia, headers, cuerpo, evento_id, contexto, traza, origen, n)
    ),
    nuevas as (
      insert into ${sql.table(`${WEBHOOK_INGEST_SCHEMA}.entregas`)} (integracion_id, empresa_id, plataforma, recurso, tema, clave_dedup, referencia, headers, cuerpo, origen)
      select integracion_id, empresa_id, plataforma, recurso, tema, clave_dedup, referencia, headers::jsonb, cuerpo, origen from entrada order by n
      on conflict (integracion_id, clave_dedup) do nothing
      returning id, integracion_id, empresa_id, clave_dedup
    ),
    eventos as (
      insert into ${sql.table(`${WEBHOOK_INGEST_SCHEMA}.outbox`)} (id, subject, payload, context, trace)
      select e.evento_id, ${DELIVERY_RECEIVED}, jsonb_build_object('id_entrega', nv.id, 'empresa_id', nv.empresa_id), e.contexto::jsonb, e.traza::jsonb
      from nuevas nv join entrada e on e.integracion_id = nv.integracion_id and e.clave_dedup = nv.clave_dedup
      order by nv.id
    )
    select id, integracion_id, clave_dedup from nuevas`.execute(db);
  return new Map(stored.map((r) => [dedupKey(r.integracion_id, r.clave_dedup), r.id]));
}

const DELIVERY_RECEIVED: keyof typeof webhookIntakeEvents = 'intake.webhooks.delivery.received';

/** How one delivery is told from another of its integration: `integracion_id:clave_dedup`. */
export const dedupKey = (integracionId: number, clave: string): string => `${integracionId}:${clave}`;

/** Ids of deliveries stored under these (integration, dedup key), by `integracion_id:clave_dedup`. */
export async function findEntregaIds(
  db: Db,
  keys: ReadonlyArray<{ integracion_id: number; clave_dedup: string }>,
): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await sql<{ id: number; integracion_id: number; clave_dedup: string }>`
    select e.id, e.integracion_id, e.clave_dedup
    from ${sql.table(`${WEBHOOK_INGEST_SCHEMA}.entregas`)} e
    join unnest(${keys.map((k) => k.integracion_id)}::int[], ${keys.map((k) => k.clave_dedup)}::text[]) as k(integracion_id, clave_dedup)
      on e.integracion_id = k.integracion_id and e.clave_dedup = k.clave_dedup`.execute(db);
  return new Map(rows.map((r) => [dedupKey(r.integracion_id, r.clave_dedup), r.id]));
}

/** A delivery with its integration, locked for processing (one worker at a time per delivery). */
export async function lockEntrega(trx: Transaction<WebhookDb>, id: number) {
  return lockedEntregas(trx, [id]).executeTakeFirst();
}

/** Deliveries with their integrations, locked in id order (as every group locks them, so two never wait on each other in a circle). */
export async function lockEntregas(trx: Transaction<WebhookDb>, ids: readonly number[]) {
  return ids.length === 0 ? [] : lockedEntregas(trx, ids).orderBy('e.id').execute();
}

function lockedEntregas(trx: Transaction<WebhookDb>, ids: readonly number[]) {
  return trx
    .selectFrom('entregas as e')
    .innerJoin('integraciones as i', 'i.id', 'e.integracion_id')
    .select([
      'e.id',
      'e.empresa_id',
      'e.plataforma',
      'e.recurso',
      'e.tema',
      'e.referencia',
      'e.cuerpo',
      'e.estado',
      'e.intentos',
      'e.origen',
      'i.id as integracion_id',
      'i.usuario_id',
      'i.sucursal_id',
      'i.bodega_id',
      'i.documento_id',
      'i.canal_id',
      'i.producto_envio_id',
      'i.sincronizar_stock',
      'i.tienda_url',
    ])
    .where('e.id', 'in', ids)
    .forUpdate('e');
}

export type LockedEntrega = NonNullable<Awaited<ReturnType<typeof lockEntrega>>>;

/** What tells whether stored deliveries can be processed together: their integration, kind and order. Read without locks. */
export async function entregaHeads(db: Db, ids: readonly number[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('entregas')
    .select(['id', 'integracion_id', 'recurso', 'tema', 'referencia', 'estado'])
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
}

export async function finishEntrega(
  db: Db,
  id: number,
  outcome: { estado: Exclude<EstadoEntrega, 'recibida'>; motivo?: string | null; id_venta?: number | null; pedido?: PedidoUpdate },
  /** Attempts this outcome took (failed attempts roll back, so they are counted when one finishes). */
  attempts = 1,
): Promise<void> {
  const finished = {
    estado: outcome.estado,
    motivo: outcome.motivo ?? null,
    id_venta: outcome.id_venta ?? null,
    intentos: sql<number>`intentos + ${attempts}`,
    procesada_at: sql<Date>`now()`,
  };
  const { pedido } = outcome;
  // The order's row, when the delivery changed it, is written by the same statement.
  if (pedido) {
    await db
      .with('pedido', (qc) => updatePedido(qc, pedido))
      .updateTable('entregas')
      .set(finished)
      .where('id', '=', id)
      .execute();
  } else {
    await db.updateTable('entregas').set(finished).where('id', '=', id).execute();
  }
}

export async function listEntregas(
  db: Db,
  filter: { estado: EstadoEntrega; empresa_id?: number; limit: number },
): Promise<EntregaResumen[]> {
  let q = db
    .selectFrom('entregas')
    .select([
      'id',
      'empresa_id',
      'integracion_id',
      'plataforma',
      'recurso',
      'tema',
      'referencia',
      'estado',
      'motivo',
      'intentos',
      'id_venta',
      'recibida_at',
      'procesada_at',
    ])
    .where('estado', '=', filter.estado)
    .orderBy('id')
    .limit(filter.limit);
  if (filter.empresa_id !== undefined) q = q.where('empresa_id', '=', filter.empresa_id);
  const rows = await q.execute();
  return rows.map(({ integracion_id, recibida_at, procesada_at, ...r }) => ({
    ...r,
    id_integracion: integracion_id,
    recibida_at: recibida_at.toISOString(),
    procesada_at: procesada_at ? procesada_at.toISOString() : null,
  }));
}

/** Puts failed deliveries back to `recibida`; returns the ones it moved. */
export async function reopenFailed(trx: Transaction<WebhookDb>, filter: { ids?: number[]; empresa_id?: number }) {
  let q = trx
    .updateTable('entregas')
    .set({ estado: 'recibida', motivo: null, procesada_at: null, encolada_at: sql<Date>`now()` })
    .where('estado', '=', 'fallida');
  if (filter.ids) q = q.where('id', 'in', filter.ids.length > 0 ? filter.ids : [0]);
  if (filter.empresa_id !== undefined) q = q.where('empresa_id', '=', filter.empresa_id);
  return q.returning(['id', 'empresa_id']).execute();
}

/**
 * Deliveries still `recibida` whose last event was recorded more than `afterMs` ago, at most
 * `limit`, locked (others sweeping skip them) and stamped as enqueued now: each is owed a new
 * `delivery.received` event, which the caller records in the same transaction.
 */
export async function takeStaleRecibidas(trx: Transaction<WebhookDb>, afterMs: number, limit: number) {
  return trx
    .updateTable('entregas')
    .set({ encolada_at: sql<Date>`now()` })
    .where(
      'id',
      'in',
      trx
        .selectFrom('entregas')
        .select('id')
        .where('estado', '=', 'recibida')
        .where('encolada_at', '<', sql<Date>`now() - make_interval(secs => ${afterMs / 1000})`)
        .orderBy('encolada_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .returning(['id', 'empresa_id'])
    .execute();
}

/** Deliveries waiting for processing and kept as failed, and how long the oldest waiting one has waited (for metrics). */
export async function entregaBacklog(db: Db): Promise<{ recibidas: number; fallidas: number; oldestAgeSeconds: number }> {
  const row = await db
    .selectFrom('entregas')
    .select([
      sql<number>`count(*) filter (where estado = 'recibida')::int`.as('recibidas'),
      sql<number>`count(*) filter (where estado = 'fallida')::int`.as('fallidas'),
      sql<number>`coalesce(extract(epoch from now() - min(recibida_at) filter (where estado = 'recibida')), 0)::float8`.as('oldest'),
    ])
    .where('estado', 'in', ['recibida', 'fallida'])
    .executeTakeFirstOrThrow();
  return { recibidas: row.recibidas, fallidas: row.fallidas, oldestAgeSeconds: row.oldest };
}
