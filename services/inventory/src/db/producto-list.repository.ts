import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { SIN_CATEGORIA, type InventoryExportFilters, type InventoryFilters, type InventoryListRequest } from '@erp/contracts';
import { compiledOnce, containsPattern, jsonArray } from '@erp/db';
import { productoJson } from './producto-json.repository';
import type { InventoryDb } from './tables';

/** The company's live products matching the filters (no columns selected yet). */
function filteredProductos(db: Kysely<InventoryDb>, empresaId: number, f: InventoryFilters) {
  let q = db
    .selectFrom('productos as p')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .where('p.empresa_id', '=', empresaId)
    .where('p.deleted_at', 'is', null);
  if (f.codigo !== undefined) q = q.where('p.codigo', 'ilike', containsPattern(f.codigo));
  if (f.nombre !== undefined) q = q.where('p.nombre', 'ilike', containsPattern(f.nombre));
  if (f.categoria !== undefined) q = q.where('c.nombre', 'ilike', containsPattern(f.categoria));
  if (f.marca !== undefined) q = q.where('p.marca', 'ilike', containsPattern(f.marca));
  if (f.tipo !== undefined) q = q.where('p.tipo', '=', f.tipo);
  if (f.enable !== undefined) q = q.where('p.enable', '=', f.enable === 1);
  // Counts over the product's entries in active warehouses of active branches, kept by triggers.
  if (f.con_stock) q = q.where('p.bodegas_con_stock', '>', 0);
  if (f.stock_minimo) q = q.where('p.bodegas_stock_bajo', '>', 0);
  return q;
}

/**
 * Whether a partial-text filter on a product column can select through its trigram index: the
 * index needs a whole trigram, and such a filter usually matches few products.
 */
const selectsByTrigram = (f: InventoryFilters) => [f.nombre, f.codigo, f.marca].some((text) => text !== undefined && text.length >= 3);

/**
 * One page of the product list with its total, the page as the JSON array the API answers. The
 * page's ids are picked first, then only their rows and stock are serialised: Postgres would
 * otherwise build the stock JSON of every row the offset skips.
 *
 * With a trigram-selective text filter the matches are collected first (a materialized CTE, so
 * the planner cannot flatten it) and only they are sorted, in one statement that also counts
 * them. Left to itself the planner walks the ordering index and filters each row, assuming the
 * matches are spread along it: every "Martillo …" sorts after 61,117 other names. Other filters
 * match a large share of the products, so walking the ordering index finds a page quickly.
 */
export async function listProductos(
  db: Kysely<InventoryDb>,
  empresaId: number,
  request: InventoryListRequest,
): Promise<{ total: number; json: string }> {
  const direction = request.order_direction;
  const offset = (request.page - 1) * request.per_page;

  if (selectsByTrigram(request)) {
    const row = await db
      .with(
        (cte) => cte('matches').materialized(),
        () => filteredProductos(db, empresaId, request).select(['p.id', sql.ref(`p.${request.order_by}`).as('sort_key')]),
      )
      .selectNoFrom((eb) => {
        const ids = eb
          .selectFrom('matches')
          .select('matches.id')
          .orderBy('matches.sort_key', direction)
          .orderBy('matches.id', direction)
          .limit(request.per_page)
          .offset(offset);
        const page = pageOf(db, empresaId, eb.selectFrom(ids.as('page')), request);
        return [
          eb
            .selectFrom('matches')
            .select((m) => m.fn.countAll<string>().as('n'))
            .as('total'),
          sql<string>`${jsonArray(page)}::text`.as('json'),
        ];
      })
      .executeTakeFirstOrThrow();
    return { total: Number(row.total), json: row.json };
  }

  const ids = filteredProductos(db, empresaId, request)
    .select('p.id')
    .orderBy(`p.${request.order_by}`, direction)
    .orderBy('p.id', direction)
    .limit(request.per_page)
    .offset(offset);
  const rows = pageOf(db, empresaId, db.selectFrom(ids.as('page')), request);
  const [count, page] = await Promise.all([
    filteredProductos(db, empresaId, request)
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow(),
    db.selectNoFrom(sql<string>`${jsonArray(rows)}::text`.as('json')).executeTakeFirstOrThrow(),
  ]);
  return { total: Number(count.total), json: page.json };
}

/**
 * The products of a page of ids, each as the JSON the list answers, in the list's order. `page`
 * selects from the ids (`page.id`), started by the builder that knows the tables they come from
 * (the CTE of matches is not a table of the schema).
 */
function pageOf(
  db: Kysely<InventoryDb>,
  empresaId: number,
  page: SelectQueryBuilder<InventoryDb & { page: { id: number } }, 'page', object>,
  request: Pick<InventoryListRequest, 'order_by' | 'order_direction'>,
) {
  return page
    .innerJoin('productos as p', 'p.id', 'page.id')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .select(productoJson(db, empresaId, false).as('producto'))
    .orderBy(`p.${request.order_by}`, request.order_direction)
    .orderBy('p.id', request.order_direction);
}

/** The filtered products; with `updated_since`, those changed since then (their stock too: migration 0007 moves `updated_at` with it). */
export function changedProductos(db: Kysely<InventoryDb>, empresaId: number, f: InventoryFilters & { updated_since?: string | undefined }) {
  const productos = filteredProductos(db, empresaId, f);
  return f.updated_since === undefined ? productos : productos.where('p.updated_at', '>=', new Date(f.updated_since));
}

/**
 * The products of an export, each its id and the JSON line `GET /inventory/{id}` answers (the
 * same SQL, stock entries with their timestamps), with the filters of the list: the rows its file
 * is read from, batch by batch.
 */
export function productoExportRows(db: Kysely<InventoryDb>, empresaId: number, filtros: InventoryExportFilters) {
  return changedProductos(db, empresaId, filtros).select(['p.id', sql<string>`${productoJson(db, empresaId, true)}::text`.as('json')]);
}

/**
 * The inventory summary from the counters the triggers keep (see migration 0004): a company's
 * few counter rows, summed. Every count is over live products, so activos + inactivos = total,
 * con + sin = total and the categories sum to total.
 */
export async function summarizeInventario(db: Kysely<InventoryDb>, empresaId: number) {
  const [[totals], categorias] = await Promise.all([inventarioTotals(db, empresaId), categoriaCounts(db, empresaId)]);
  return { totals: totals!, categorias };
}

const inventarioTotals = compiledOnce((db: Kysely<InventoryDb>, empresaId: number) =>
  db
    .selectFrom('resumen_inventario')
    .where('empresa_id', '=', empresaId)
    .select([
      sql<number>`coalesce(sum(productos), 0)::int`.as('total'),
      sql<number>`coalesce(sum(activos), 0)::int`.as('activos'),
      sql<number>`coalesce(sum(productos - activos), 0)::int`.as('inactivos'),
      sql<string>`coalesce(sum(stock_total), 0)::text`.as('stock_total'),
      sql<string>`round(coalesce(sum(valor_total), 0), 2)::text`.as('valor_total'),
      sql<number>`coalesce(sum(con_stock), 0)::int`.as('con_stock'),
      sql<number>`coalesce(sum(stock_bajo), 0)::int`.as('stock_bajo'),
    ]),
);

const categoriaCounts = compiledOnce((db: Kysely<InventoryDb>, empresaId: number) =>
  db
    .selectFrom('resumen_categorias as r')
    .leftJoin('categorias as c', 'c.id', 'r.categoria_id')
    .where('r.empresa_id', '=', empresaId)
    .groupBy(['r.categoria_id', 'c.nombre'])
    .having(sql`sum(r.productos)`, '>', 0)
    .select([sql<string>`coalesce(c.nombre, ${SIN_CATEGORIA})`.as('categoria'), sql<number>`sum(r.productos)::int`.as('cantidad')])
    .orderBy('cantidad', 'desc')
    .orderBy('categoria'),
);
