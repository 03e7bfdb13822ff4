import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { SIN_CATEGORIA, type InventoryExportFilters, type InventoryFilters, type InventoryListRequest } from '@erp/contracts';
import {
  compiledOnce,
  jsonLineBatch,
  containsPattern,
  jsonArray,
  jsonDecimal,
  jsonObject,
  jsonTimestamp,
  readChangePage,
  type ChangeCursor,
  type ChangePage,
} from '@erp/db';
import type { InventoryDb } from './tables';

type ProductScope = ExpressionBuilder<InventoryDb & { p: InventoryDb['productos'] }, 'p'>;

/** Columns of the Product contract, read from `productos as p` left-joined to `categorias as c`. */
const PRODUCT_COLUMNS = [
  'p.id',
  'p.nombre',
  'p.descripcion',
  'p.codigo',
  'p.barcode',
  'c.nombre as nombre_categoria',
  'p.precio',
  'p.costo',
  'p.costo_anterior',
  'p.costo_promedio',
  'p.marca',
  'p.tipo',
  sql<0 | 1>`p.enable::int`.as('enable'),
  'p.img',
  'p.created_at',
  'p.updated_at',
] as const;

/** A product's entries in active warehouses of active branches, as one correlated sub-select. */
function stockEntries(eb: ProductScope, empresaId: number, withTimestamps: boolean) {
  const base = eb
    .selectFrom('inventarios as i')
    .innerJoin('bodegas as b', 'b.id', 'i.bodega_id')
    .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
    .whereRef('i.producto_id', '=', 'p.id')
    .where('i.empresa_id', '=', empresaId)
    .where('b.activo', '=', true)
    .where('s.activo', '=', true)
    .select([
      'i.producto_id as id_producto',
      'i.bodega_id as id_bodega',
      's.id as id_sucursal',
      // Text keeps the decimals exact through JSON; the contract turns them into numbers.
      sql<string>`i.stock::text`.as('stock'),
      sql<string>`i.stock_minimo::text`.as('stock_minimo'),
      sql<string>`i.stock_maximo::text`.as('stock_maximo'),
      'i.nota',
      'b.nombre as nombre_bodega',
      's.nombre as nombre_sucursal',
    ])
    .orderBy('i.bodega_id');
  return jsonArrayFrom(withTimestamps ? base.select(['i.created_at', 'i.updated_at']) : base).as('inventarios');
}

const ref = (column: string) => sql.ref(column);
const decimal = (column: string) => jsonDecimal(sql.ref(column));
const timestamp = (column: string) => jsonTimestamp(sql.ref(column));

/**
 * A product of `productos as p` left-joined to `categorias as c`, with its entries in active
 * warehouses of active branches, as the JSON the API answers (the contract's `Product`, field for
 * field and in its order), built by Postgres: reads pass it on as text.
 */
function productJson(db: Kysely<InventoryDb>, empresaId: number, withTimestamps: boolean) {
  const inventarios = db
    .selectFrom('inventarios as i')
    .innerJoin('bodegas as b', 'b.id', 'i.bodega_id')
    .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
    .select(
      jsonObject({
        id_producto: ref('i.producto_id'),
        id_bodega: ref('i.bodega_id'),
        id_sucursal: ref('s.id'),
        stock: decimal('i.stock'),
        stock_minimo: decimal('i.stock_minimo'),
        stock_maximo: decimal('i.stock_maximo'),
        nota: ref('i.nota'),
        nombre_bodega: ref('b.nombre'),
        nombre_sucursal: ref('s.nombre'),
        ...(withTimestamps ? { created_at: timestamp('i.created_at'), updated_at: timestamp('i.updated_at') } : {}),
      }).as('entrada'),
    )
    .where(sql<boolean>`i.producto_id = p.id`)
    .where('i.empresa_id', '=', empresaId)
    .where('b.activo', '=', true)
    .where('s.activo', '=', true)
    .orderBy('i.bodega_id');
  return jsonObject({
    id: ref('p.id'),
    nombre: ref('p.nombre'),
    descripcion: ref('p.descripcion'),
    codigo: ref('p.codigo'),
    barcode: ref('p.barcode'),
    nombre_categoria: ref('c.nombre'),
    precio: decimal('p.precio'),
    costo: decimal('p.costo'),
    costo_anterior: decimal('p.costo_anterior'),
    costo_promedio: decimal('p.costo_promedio'),
    marca: ref('p.marca'),
    tipo: ref('p.tipo'),
    enable: sql`p.enable::int`,
    img: ref('p.img'),
    created_at: timestamp('p.created_at'),
    updated_at: timestamp('p.updated_at'),
    inventarios: jsonArray(inventarios),
  });
}

/** The company's live products matching the filters (no columns selected yet). */
function filteredProducts(db: Kysely<InventoryDb>, empresaId: number, f: InventoryFilters) {
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
export async function listProducts(
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
        () => filteredProducts(db, empresaId, request).select(['p.id', sql.ref(`p.${request.order_by}`).as('sort_key')]),
      )
      .selectNoFrom((eb) => {
        const page = eb
          .selectFrom((sub) =>
            sub
              .selectFrom('matches')
              .select('matches.id')
              .orderBy('matches.sort_key', direction)
              .orderBy('matches.id', direction)
              .limit(request.per_page)
              .offset(offset)
              .as('page'),
          )
          .innerJoin('productos as p', 'p.id', 'page.id')
          .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
          .select(productJson(db, empresaId, false).as('producto'))
          .orderBy(`p.${request.order_by}`, direction)
          .orderBy('p.id', direction);
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

  const rows = db
    .selectFrom(
      filteredProducts(db, empresaId, request)
        .select('p.id')
        .orderBy(`p.${request.order_by}`, direction)
        .orderBy('p.id', direction)
        .limit(request.per_page)
        .offset(offset)
        .as('page'),
    )
    .innerJoin('productos as p', 'p.id', 'page.id')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .select(productJson(db, empresaId, false).as('producto'))
    .orderBy(`p.${request.order_by}`, direction)
    .orderBy('p.id', direction);
  const [count, page] = await Promise.all([
    filteredProducts(db, empresaId, request)
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow(),
    db.selectNoFrom(sql<string>`${jsonArray(rows)}::text`.as('json')).executeTakeFirstOrThrow(),
  ]);
  return { total: Number(count.total), json: page.json };
}

/** The filtered products; with `updated_since`, those changed since then (their stock too: migration 0007 moves `updated_at` with it). */
function changedProducts(db: Kysely<InventoryDb>, empresaId: number, f: InventoryFilters & { updated_since?: string | undefined }) {
  const products = filteredProducts(db, empresaId, f);
  return f.updated_since === undefined ? products : products.where('p.updated_at', '>=', new Date(f.updated_since));
}

/**
 * Up to `limit` products after id `afterId`, by id, as the JSON lines `GET /inventory/{id}`
 * answers (the same SQL, stock entries with their timestamps), with the filters of the list: one
 * batch of an export's file.
 */
export async function productExportBatch(
  trx: Transaction<InventoryDb>,
  empresaId: number,
  filtros: InventoryExportFilters,
  afterId: number,
  limit: number,
) {
  const page = changedProducts(trx, empresaId, filtros)
    .where('p.id', '>', afterId)
    .select(['p.id', sql<string>`${productJson(trx, empresaId, true)}::text`.as('json')])
    .orderBy('p.id')
    .limit(limit);
  return jsonLineBatch(trx, page);
}

/**
 * Delta sync: one page of the products that changed after a position (see `readChangePage`). A
 * product's stamp and `updated_at` move with its stock too (migration 0007). The page's products
 * are picked first, then only they are read with their stock. Run it in a repeatable-read
 * transaction: rows, stock and horizon then come from one snapshot.
 */
export async function listProductChanges(
  trx: Kysely<InventoryDb>,
  empresaId: number,
  request: InventoryListRequest,
  after: ChangeCursor | undefined,
): Promise<ChangePage<ProductWithStock>> {
  const page = await readChangePage(changedProducts(trx, empresaId, request).select('p.id'), {
    table: 'p',
    after,
    perPage: request.per_page,
  });
  const rows =
    page.rows.length === 0
      ? []
      : await trx
          .selectFrom('productos as p')
          .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
          .select(PRODUCT_COLUMNS)
          .select((eb) => stockEntries(eb, empresaId, false))
          .where('p.empresa_id', '=', empresaId)
          .where(
            'p.id',
            'in',
            page.rows.map((r) => r.id),
          )
          .execute();
  const byId = new Map<number, ProductWithStock>(rows.map((r) => [r.id, r]));
  return { ...page, rows: page.rows.map((r) => byId.get(r.id)!) };
}

/** One product of the company as the JSON `GET /inventory/{id}` answers, its stock entries with their timestamps, in one statement. Soft-deleted products are never found. */
export async function findProductJson(db: Kysely<InventoryDb>, empresaId: number, id: number): Promise<string | undefined> {
  const [row] = await productJsonStatement(db, empresaId, id);
  return row?.json;
}

const productJsonStatement = compiledOnce((db: Kysely<InventoryDb>, empresaId: number, id: number) =>
  db
    .selectFrom('productos as p')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .where('p.empresa_id', '=', empresaId)
    .where('p.id', '=', id)
    .where('p.deleted_at', 'is', null)
    .select(sql<string>`${productJson(db, empresaId, true)}::text`.as('json')),
);

/** A product read with its stock entries, as the Product contract's input. */
type ProductWithStock = NonNullable<Awaited<ReturnType<typeof findProductWithStock>>>;

/** One product of the company with its stock entries and their timestamps. Soft-deleted products are never found. */
export async function findProductWithStock(db: Kysely<InventoryDb>, empresaId: number, id: number) {
  return db
    .selectFrom('productos as p')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .where('p.empresa_id', '=', empresaId)
    .where('p.id', '=', id)
    .where('p.deleted_at', 'is', null)
    .select(PRODUCT_COLUMNS)
    .select((eb) => stockEntries(eb, empresaId, true))
    .executeTakeFirst();
}

/**
 * The inventory summary from the counters the triggers keep (see migration 0004): a company's
 * few counter rows, summed. Every count is over live products, so activos + inactivos = total,
 * con + sin = total and the categories sum to total.
 */
export async function summarizeInventory(db: Kysely<InventoryDb>, empresaId: number) {
  const [[totals], categorias] = await Promise.all([inventoryTotals(db, empresaId), categoryCounts(db, empresaId)]);
  return { totals: totals!, categorias };
}

const inventoryTotals = compiledOnce((db: Kysely<InventoryDb>, empresaId: number) =>
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

const categoryCounts = compiledOnce((db: Kysely<InventoryDb>, empresaId: number) =>
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

/**
 * The company's live products with any of the ids, codes or barcodes asked for, with their
 * stock in one warehouse when `bodegaId` is given. Decimals stay exact strings.
 */
export async function findProductsForSale(
  db: Kysely<InventoryDb>,
  empresaId: number,
  wanted: { ids: readonly number[]; codes: readonly string[] },
  bodegaId: number | undefined,
) {
  if (wanted.ids.length === 0 && wanted.codes.length === 0) return [];
  return db
    .selectFrom('productos as p')
    .leftJoin('inventarios as i', (join) =>
      join
        .onRef('i.producto_id', '=', 'p.id')
        .on('i.empresa_id', '=', empresaId)
        .on('i.bodega_id', '=', bodegaId ?? -1),
    )
    .where('p.empresa_id', '=', empresaId)
    .where('p.deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        ...(wanted.ids.length > 0 ? [eb('p.id', 'in', [...new Set(wanted.ids)])] : []),
        ...(wanted.codes.length > 0
          ? [eb('p.codigo', 'in', [...new Set(wanted.codes)]), eb('p.barcode', 'in', [...new Set(wanted.codes)])]
          : []),
      ]),
    )
    .select([
      'p.id',
      'p.codigo',
      'p.barcode',
      'p.nombre',
      'p.descripcion',
      'p.marca',
      'p.tipo',
      sql<0 | 1>`p.enable::int`.as('enable'),
      sql<string>`p.precio::text`.as('precio'),
      sql<string>`p.costo::text`.as('costo'),
      sql<string>`p.costo_promedio::text`.as('costo_promedio'),
      sql<string | null>`p.porcentaje_impuesto::text`.as('porcentaje_impuesto'),
      sql<string | null>`i.stock::text`.as('stock'),
    ])
    .orderBy('p.id')
    .execute();
}
