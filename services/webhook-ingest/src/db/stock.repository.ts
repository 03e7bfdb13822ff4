import { sql, type Kysely, type Transaction } from 'kysely';
import type { WebhookDb } from './tables';

type Db = Kysely<WebhookDb> | Transaction<WebhookDb>;

/** A product and warehouse whose stock changed (one entry of a stock event). */
export interface StockMove {
  id_producto: number;
  codigo: string;
  id_bodega: number;
}

/**
 * Marks the products owed to every shop that shows the warehouse's stock, for the stock changes
 * of any companies at once: the first change not pushed yet starts the coalescing window; later
 * ones only count (once per change given). Returns the rows marked.
 */
export async function markStockChanged(
  db: Db,
  changes: ReadonlyArray<{ empresaId: number; moves: readonly StockMove[] }>,
): Promise<number> {
  // A product counts once per change, however many of its moves the change holds.
  const moves = changes.flatMap((c) =>
    [...new Map(c.moves.map((m) => [`${m.id_producto}:${m.id_bodega}`, m])).values()].map((m) => ({ ...m, empresaId: c.empresaId })),
  );
  if (moves.length === 0) return 0;
  const { numAffectedRows } = await sql`
    insert into webhook_ingest.stock_push (integracion_id, producto_id, empresa_id, codigo, pendiente_desde, cambios)
    select i.id, m.producto_id, i.empresa_id, m.codigo, now(), m.cambios
    from (
      select empresa_id, producto_id, bodega_id, max(codigo) as codigo, count(*)::int as cambios
      from unnest(${moves.map((m) => m.empresaId)}::int[], ${moves.map((m) => m.id_producto)}::int[],
                  ${moves.map((m) => m.codigo)}::text[], ${moves.map((m) => m.id_bodega)}::int[])
        as m(empresa_id, producto_id, codigo, bodega_id)
      group by empresa_id, producto_id, bodega_id
    ) m
    join webhook_ingest.integraciones i
      on i.empresa_id = m.empresa_id and i.bodega_id = m.bodega_id and i.sincronizar_stock and i.activo and i.tienda_url is not null
    on conflict (integracion_id, producto_id) do update
      set pendiente_desde = coalesce(stock_push.pendiente_desde, now()), cambios = stock_push.cambios + excluded.cambios, codigo = excluded.codigo`.execute(
    db,
  );
  return Number(numAffectedRows ?? 0);
}

/** Marks every product of the company that an integration's shop should show (a full push: drift repair). */
export async function markAll(db: Db, integracionId: number, empresaId: number, productos: ReadonlyArray<{ id: number; codigo: string }>) {
  if (productos.length === 0) return;
  await sql`
    insert into webhook_ingest.stock_push (integracion_id, producto_id, empresa_id, codigo, pendiente_desde)
    select ${integracionId}, p.id, ${empresaId}, p.codigo, now() - interval '1 hour'
    from unnest(${productos.map((p) => p.id)}::int[], ${productos.map((p) => p.codigo)}::text[]) as p(id, codigo)
    on conflict (integracion_id, producto_id) do update
      set pendiente_desde = coalesce(stock_push.pendiente_desde, excluded.pendiente_desde), codigo = excluded.codigo`.execute(db);
}

export interface ClaimedStock {
  integracion_id: number;
  producto_id: number;
  codigo: string;
  /** When the first change this push carries happened. */
  tomado_desde: Date;
  cambios: number;
  intentos: number;
}

/**
 * Takes up to `limit` products owed to their shops: those whose first change is `delayMs` old
 * (the coalescing window) and not taken under a live lease, and those a lapsed lease left taken.
 * Taking clears the mark: a change after it marks the product again for the next push.
 */
export async function claimStock(db: Db, owner: string, leaseMs: number, delayMs: number, limit: number): Promise<ClaimedStock[]> {
  const { rows } = await sql<ClaimedStock>`
    with due as (
      select integracion_id, producto_id from webhook_ingest.stock_push
      where proximo_at <= now()
        and ((pendiente_desde <= now() - ${delayMs} * interval '1 millisecond' and (vence_at is null or vence_at < now()))
          or (dueno is not null and vence_at < now()))
      order by coalesce(tomado_desde, pendiente_desde)
      limit ${limit}
      for update skip locked
    )
    update webhook_ingest.stock_push s
    set dueno = ${owner}, vence_at = now() + ${leaseMs} * interval '1 millisecond',
      tomado_desde = coalesce(s.tomado_desde, s.pendiente_desde), pendiente_desde = null
    from due where s.integracion_id = due.integracion_id and s.producto_id = due.producto_id
    returning s.integracion_id, s.producto_id, s.codigo, s.tomado_desde, s.cambios, s.intentos`.execute(db);
  return rows;
}

/** The shop took these values: the products are settled, but for changes that came meanwhile. */
export async function settleStock(
  db: Db,
  owner: string,
  integracionId: number,
  done: ReadonlyArray<{ producto_id: number; enviado: number | null; cambios: number }>,
): Promise<void> {
  if (done.length === 0) return;
  await sql`
    update webhook_ingest.stock_push s
    set dueno = null, vence_at = null, tomado_desde = null, intentos = 0, error = null,
      enviado = coalesce(d.enviado, s.enviado), enviado_at = now(), cambios = greatest(0, s.cambios - d.cambios)
    from unnest(${done.map((d) => d.producto_id)}::int[], ${done.map((d) => d.enviado)}::int[], ${done.map((d) => d.cambios)}::int[])
      as d(producto_id, enviado, cambios)
    where s.integracion_id = ${integracionId} and s.producto_id = d.producto_id and s.dueno = ${owner}`.execute(db);
}

/** The push failed: the products are owed again, after `retryMs`, with the reason. */
export async function failStock(
  db: Db,
  owner: string,
  integracionId: number,
  productos: readonly number[],
  error: string,
  retryMs: number,
) {
  if (productos.length === 0) return;
  await sql`
    update webhook_ingest.stock_push
    set dueno = null, vence_at = null, pendiente_desde = coalesce(pendiente_desde, tomado_desde), tomado_desde = null,
      intentos = intentos + 1, error = ${error}, proximo_at = now() + ${retryMs} * interval '1 millisecond'
    where integracion_id = ${integracionId} and producto_id = any(${productos}::int[]) and dueno = ${owner}`.execute(db);
}

/** What a push needs of its integrations. */
export async function pushTargets(db: Db, ids: readonly number[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('integraciones')
    .select([
      'id',
      'empresa_id',
      'usuario_id',
      'plataforma',
      'bodega_id',
      'tienda_url',
      'tienda_credenciales',
      'tienda_ubicacion',
      'stock_colchon',
      'sincronizar_stock',
      'activo',
    ])
    .where('id', 'in', [...ids])
    .execute();
}
export type PushTarget = Awaited<ReturnType<typeof pushTargets>>[number];

/** How the shop names these SKUs, as far as known. */
export async function knownTiendaProductos(db: Db, integracionId: number, codigos: readonly string[]) {
  type Row = { codigo: string; id_externo: string | null; id_padre: string | null; leido: number | null; revisado_at: Date };
  if (codigos.length === 0) return new Map<string, Row>();
  const rows = await db
    .selectFrom('tienda_productos')
    .selectAll()
    .where('integracion_id', '=', integracionId)
    .where('codigo', 'in', [...codigos])
    .execute();
  return new Map<string, Row>(rows.map((r) => [r.codigo, r]));
}

export async function saveTiendaProductos(
  db: Db,
  integracionId: number,
  rows: ReadonlyArray<{ codigo: string; id_externo: string | null; id_padre: string | null; leido: number | null }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('tienda_productos')
    .values(rows.map((r) => ({ integracion_id: integracionId, ...r })))
    .onConflict((oc) =>
      oc.columns(['integracion_id', 'codigo']).doUpdateSet((eb) => ({
        id_externo: eb.ref('excluded.id_externo'),
        id_padre: eb.ref('excluded.id_padre'),
        leido: eb.ref('excluded.leido'),
        revisado_at: sql<Date>`now()`,
      })),
    )
    .execute();
}

/** Records a push the shop took, and forgets those older than a day. */
export async function recordPush(db: Db, integracionId: number, lagMs: number, productos: number, cambios: number): Promise<void> {
  await db
    .insertInto('stock_envios')
    .values({ integracion_id: integracionId, lag_ms: Math.round(lagMs), productos, cambios })
    .execute();
  await db
    .deleteFrom('stock_envios')
    .where('enviado_at', '<', sql<Date>`now() - interval '1 day'`)
    .execute();
}

/** The stock side of `GET /integrations`, per integration of the company. */
export async function stockStates(db: Db, empresaId: number) {
  const { rows } = await sql<{
    integracion_id: number;
    mapeados: number;
    sin_mapear: number;
    pendientes: number;
    fallando: number;
    ultimo_error: string | null;
    p50: number | null;
    p99: number | null;
    envios: number;
  }>`
    select i.id as integracion_id,
      (select count(*)::int from webhook_ingest.tienda_productos t where t.integracion_id = i.id and t.id_externo is not null) as mapeados,
      (select count(*)::int from webhook_ingest.tienda_productos t where t.integracion_id = i.id and t.id_externo is null) as sin_mapear,
      (select count(*)::int from webhook_ingest.stock_push s where s.integracion_id = i.id and (s.pendiente_desde is not null or s.dueno is not null)) as pendientes,
      (select count(*)::int from webhook_ingest.stock_push s where s.integracion_id = i.id and s.intentos > 0) as fallando,
      (select s.error from webhook_ingest.stock_push s where s.integracion_id = i.id and s.intentos > 0 order by s.proximo_at desc limit 1) as ultimo_error,
      e.p50, e.p99, coalesce(e.n, 0)::int as envios
    from webhook_ingest.integraciones i
    left join lateral (
      select percentile_cont(0.5) within group (order by lag_ms) as p50, percentile_cont(0.99) within group (order by lag_ms) as p99, count(*) as n
      from webhook_ingest.stock_envios e where e.integracion_id = i.id and e.enviado_at > now() - interval '1 hour'
    ) e on true
    where i.empresa_id = ${empresaId}`.execute(db);
  return new Map(rows.map((r) => [r.integracion_id, r]));
}

/** Seconds since the oldest change still owed to a shop (0 when none): the push lag that waits. */
export async function oldestOwedStock(db: Db): Promise<number> {
  const { rows } = await sql<{ edad: number | null }>`
    select extract(epoch from now() - min(coalesce(tomado_desde, pendiente_desde)))::float8 as edad
    from webhook_ingest.stock_push where pendiente_desde is not null or dueno is not null`.execute(db);
  return Math.max(0, rows[0]?.edad ?? 0);
}
