import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { EstadoSuscripcion, IntegracionEstado } from '@erp/contracts';
import { stockStates } from './stock.repository';
import type { WebhookDb } from './tables';

type Db = Kysely<WebhookDb> | Transaction<WebhookDb>;

/** An integration whose pass this replica holds: what the pass needs of it. */
export interface ClaimedPass {
  integracion_id: number;
  empresa_id: number;
  plataforma: WebhookDb['integraciones']['plataforma'];
  tienda_url: string;
  tienda_credenciales: Buffer;
  secreto: string | null;
  marca: Date | null;
  creada_at: Date;
  fallos_seguidos: number;
}

/** Starts the reconciliation of an integration given a shop API (its first pass is due at once). */
export async function insertConciliacion(db: Db, integracionId: number, empresaId: number): Promise<void> {
  await db
    .insertInto('conciliaciones')
    .values({ integracion_id: integracionId, empresa_id: empresaId })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/**
 * Takes the lease of up to `limit` passes that are due (or of the one integration named, due or
 * not) and not held by a live lease, oldest due first; rows held by another claim are skipped.
 */
export async function claimPasses(
  db: Db,
  owner: string,
  leaseMs: number,
  which: { limit: number } | { integracionId: number },
): Promise<ClaimedPass[]> {
  const due = 'integracionId' in which ? sql`c.integracion_id = ${which.integracionId}` : sql`c.proxima_at <= now()`;
  const limit = 'limit' in which ? which.limit : 1;
  const { rows } = await sql<ClaimedPass>`
    with libres as (
      select c.integracion_id from webhook_ingest.conciliaciones c
      join webhook_ingest.integraciones i on i.id = c.integracion_id
      where ${due} and i.activo and i.tienda_url is not null and i.tienda_credenciales is not null
        and (c.vence_at is null or c.vence_at < now())
      order by c.proxima_at
      limit ${limit}
      for update of c skip locked
    )
    update webhook_ingest.conciliaciones c
    set dueno = ${owner}, vence_at = now() + ${leaseMs} * interval '1 millisecond'
    from libres, webhook_ingest.integraciones i
    where c.integracion_id = libres.integracion_id and i.id = c.integracion_id
    returning c.integracion_id, c.empresa_id, i.plataforma, i.tienda_url, i.tienda_credenciales, i.secreto, c.marca,
      i.created_at as creada_at, c.fallos_seguidos`.execute(db);
  return rows;
}

/** Keeps the lease alive during a long pass; false when it was lost (lapsed and taken by another). */
export async function renewLease(db: Db, integracionId: number, owner: string, leaseMs: number): Promise<boolean> {
  const r = await db
    .updateTable('conciliaciones')
    .set({ vence_at: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` })
    .where('integracion_id', '=', integracionId)
    .where('dueno', '=', owner)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export interface PassOutcome {
  correcta: boolean;
  error: string | null;
  marca: Date | null;
  leidos: number;
  recuperados: number;
  suscripcion: EstadoSuscripcion | null;
  /** When the next pass is due, from now. */
  siguienteEnMs: number;
}

/** Records a pass and releases its lease; nothing when the lease was lost meanwhile. */
export async function finishPass(db: Db, integracionId: number, owner: string, o: PassOutcome): Promise<boolean> {
  const r = await db
    .updateTable('conciliaciones')
    .set((eb) => ({
      dueno: null,
      vence_at: null,
      marca: o.marca,
      proxima_at: sql<Date>`now() + ${o.siguienteEnMs} * interval '1 millisecond'`,
      ultima_at: sql<Date>`now()`,
      ...(o.correcta ? { correcta_at: sql<Date>`now()`, fallos_seguidos: 0 } : { fallos_seguidos: eb('fallos_seguidos', '+', 1) }),
      resultado: o.correcta ? 'correcta' : 'fallida',
      error: o.error,
      pedidos_leidos: o.leidos,
      pedidos_recuperados: eb('pedidos_recuperados', '+', o.recuperados),
      ...(o.suscripcion ? { suscripcion: o.suscripcion } : {}),
      ...(o.suscripcion === 'restaurada' ? { restauraciones: eb('restauraciones', '+', 1) } : {}),
    }))
    .where('integracion_id', '=', integracionId)
    .where('dueno', '=', owner)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** A pass owed at once by every integration (the service came back: whatever it missed is read now). */
export async function duePassesNow(db: Db): Promise<void> {
  await db
    .updateTable('conciliaciones')
    .set({ proxima_at: sql<Date>`now()` })
    .where('proxima_at', '>', sql<Date>`now()`)
    .execute();
}

/** The orders of a page we already hold at this version or newer, or whose delivery waits: by reference. */
export async function knownPedidos(db: Db, empresaId: number, integracionId: number, referencias: string[]) {
  const { rows } = await sql<{
    referencia: string;
    version: Date | null;
    cancelado: boolean | null;
    estado_plataforma: string | null;
    lineas_pendientes: boolean | null;
    esperando: boolean;
    visto: boolean;
  }>`
    select r.referencia, p.version, p.cancelado, p.estado_plataforma, p.lineas_pendientes,
      exists (select 1 from webhook_ingest.entregas e
              where e.integracion_id = ${integracionId} and e.referencia = r.referencia and e.estado = 'recibida') as esperando,
      p.referencia is not null or exists (select 1 from webhook_ingest.entregas e
              where e.integracion_id = ${integracionId} and e.referencia = r.referencia) as visto
    from unnest(${referencias}::text[]) as r(referencia)
    left join webhook_ingest.pedidos p on p.empresa_id = ${empresaId} and p.referencia = r.referencia`.execute(db);
  return new Map(rows.map((r) => [r.referencia, r]));
}

/** An integration's orders first seen within `window`, and those of them reconciliation brought first. */
const firstPaths = (integracion: RawBuilder<unknown>, window: RawBuilder<unknown>) => sql`
  select count(*) as pedidos, count(*) filter (where p.origen = 'conciliacion') as recuperados
  from webhook_ingest.pedidos p
  where p.integracion_id = ${integracion} and p.created_at > now() - ${window} and p.origen is not null`;

/** What `GET /integrations` shows of a company's integrations, with the webhook miss rate over the last `dias` days. */
export async function integrationStates(db: Db, empresaId: number, dias: number): Promise<IntegracionEstado[]> {
  const { rows } = await sql<{
    id: number;
    plataforma: IntegracionEstado['plataforma'];
    activo: boolean;
    tienda_url: string | null;
    sincronizar_stock: boolean;
    stock_colchon: number;
    suscripcion: EstadoSuscripcion | null;
    restauraciones: number | null;
    ultima_at: Date | null;
    resultado: 'correcta' | 'fallida' | null;
    error: string | null;
    proxima_at: Date | null;
    pedidos_leidos: number | null;
    pedidos_recuperados: number | null;
    pedidos: number;
    recuperados: number;
  }>`
    select i.id, i.plataforma, i.activo, i.tienda_url, i.sincronizar_stock, i.stock_colchon, c.suscripcion, c.restauraciones, c.ultima_at, c.resultado, c.error,
      c.proxima_at, c.pedidos_leidos, c.pedidos_recuperados,
      coalesce(m.pedidos, 0)::int as pedidos, coalesce(m.recuperados, 0)::int as recuperados
    from webhook_ingest.integraciones i
    left join webhook_ingest.conciliaciones c on c.integracion_id = i.id
    left join lateral (${firstPaths(sql`i.id`, sql`${dias} * interval '1 day'`)}) m on true
    where i.empresa_id = ${empresaId}
    order by i.id`.execute(db);
  const stock = await stockStates(db, empresaId);
  return rows.map((r) => ({
    id: r.id,
    plataforma: r.plataforma,
    activo: r.activo,
    tienda: r.tienda_url ? { url: r.tienda_url } : null,
    suscripcion: { estado: r.tienda_url ? (r.suscripcion ?? 'desconocida') : 'sin_tienda', restauraciones: r.restauraciones ?? 0 },
    conciliacion: {
      ultima_at: r.ultima_at?.toISOString() ?? null,
      resultado: r.resultado,
      error: r.error,
      proxima_at: r.tienda_url ? (r.proxima_at?.toISOString() ?? null) : null,
      pedidos_leidos: r.pedidos_leidos ?? 0,
      pedidos_recuperados: r.pedidos_recuperados ?? 0,
    },
    stock: {
      sincronizar: r.sincronizar_stock,
      colchon: r.stock_colchon,
      productos_mapeados: stock.get(r.id)?.mapeados ?? 0,
      skus_sin_mapear: stock.get(r.id)?.sin_mapear ?? 0,
      pendientes: stock.get(r.id)?.pendientes ?? 0,
      fallando: stock.get(r.id)?.fallando ?? 0,
      ultimo_error: stock.get(r.id)?.ultimo_error ?? null,
      envios_ultima_hora: stock.get(r.id)?.envios ?? 0,
      retraso_ms: { p50: stock.get(r.id)?.p50 ?? null, p99: stock.get(r.id)?.p99 ?? null },
    },
    webhooks_perdidos: {
      dias,
      pedidos: r.pedidos,
      recuperados: r.recuperados,
      tasa: r.pedidos > 0 ? (r.recuperados / r.pedidos).toFixed(4) : null,
    },
  }));
}

/** For the metrics: the oldest last success among integrations with a shop API, and each one's miss rate over a day. */
export async function reconciliationHealth(db: Db) {
  const { rows } = await sql<{ integracion_id: number; edad: number; pedidos: number; recuperados: number }>`
    select c.integracion_id,
      extract(epoch from now() - coalesce(c.correcta_at, i.created_at))::float8 as edad,
      coalesce(m.pedidos, 0)::int as pedidos, coalesce(m.recuperados, 0)::int as recuperados
    from webhook_ingest.conciliaciones c join webhook_ingest.integraciones i on i.id = c.integracion_id
    left join lateral (${firstPaths(sql`c.integracion_id`, sql`interval '1 day'`)}) m on true
    where i.activo and i.tienda_url is not null`.execute(db);
  return rows;
}

/** Integrations that reconcile: active, with a shop API. */
export async function reconciledIntegrationIds(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom('conciliaciones as c')
    .innerJoin('integraciones as i', 'i.id', 'c.integracion_id')
    .select('c.integracion_id')
    .where('i.activo', '=', true)
    .where('i.tienda_url', 'is not', null)
    .orderBy('c.integracion_id')
    .execute();
  return rows.map((r) => r.integracion_id);
}
