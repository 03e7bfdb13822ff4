import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { SalesExportFilters, SalesFilters, SalesListRequest } from '@erp/contracts';
import { compiledPerShape, filterShape, jsonArray, shapedFilters } from '@erp/db';
import { pageStart } from '../domain/summary';
import { ventaJson } from './venta-json.repository';
import type { SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

/** The company's sales under the filters of the list (no columns selected yet). */
export function filteredVentas(db: Db, empresaId: number, f: SalesFilters) {
  let q = db.selectFrom('ventas as v').where('v.empresa_id', '=', empresaId);
  if (f.fecha_inicio !== undefined) q = q.where('v.fecha', '>=', f.fecha_inicio);
  if (f.fecha_fin !== undefined) q = q.where('v.fecha', '<=', f.fecha_fin);
  if (f.estado !== undefined) q = q.where('v.estado', '=', f.estado);
  return q;
}

/** The company's sales under the filters of the list, each with the JSON `GET /sales/{id}` answers (the same SQL): an export's rows. */
export function ventaExportRows(db: Db, empresaId: number, filtros: SalesExportFilters) {
  let rows = filteredVentas(db, empresaId, filtros);
  if (filtros.updated_since !== undefined) rows = rows.where('v.updated_at', '>=', new Date(filtros.updated_since));
  return rows.select(['v.id', sql<string>`${ventaJson(db)}::text`.as('json')]);
}

const FILTERS = ['fecha_inicio', 'fecha_fin', 'estado'] as const;
type SummaryFilters = Pick<SalesFilters, (typeof FILTERS)[number]>;
/** A list request paged by number (delta sync, by change, is `listVentaChanges`). */
export type PagedVentasRequest = Omit<SalesListRequest, 'updated_since' | 'cursor'>;
/**
 * `T` when each of its filters is one the daily summary answers, never otherwise: a filter added
 * to the list or summary request makes the calls below fail to compile, since its count would
 * then need count(*) over ventas.
 */
type AnsweredBySummary<T> = [Exclude<keyof T, keyof SummaryFilters | 'page' | 'per_page' | 'order_by' | 'order_direction'>] extends [never]
  ? T
  : never;

/** The daily summary rows under the filters. */
function summaryRows(db: Db, empresaId: number, f: AnsweredBySummary<PagedVentasRequest> | AnsweredBySummary<SalesFilters>) {
  let q = db.selectFrom('ventas_resumen_diario as r').where('r.empresa_id', '=', empresaId);
  if (f.fecha_inicio !== undefined) q = q.where('r.fecha', '>=', f.fecha_inicio);
  if (f.fecha_fin !== undefined) q = q.where('r.fecha', '<=', f.fecha_fin);
  if (f.estado !== undefined) q = q.where('r.estado', '=', f.estado);
  return q;
}

/** The list's order: the requested column (correlatives by prefix, then number), then id. */
function orderTerms(orderBy: SalesListRequest['order_by']) {
  return orderBy === 'correlativo'
    ? [sql`left(v.correlativo, length(v.correlativo) - length(v.numero::text))`, sql.ref('v.numero'), sql.ref('v.id')]
    : [sql.ref(`v.${orderBy}`), sql.ref('v.id')];
}

/**
 * One page of sales with their lines, as the JSON array the API answers, in two statements
 * whatever the page size or depth. The count comes from the daily summary. The page's ids are
 * picked from the narrow index of its order (`(empresa_id, <column>, id)`, an index-only scan on a
 * vacuumed table), and only those rows of the wide sales table are read and serialised, with
 * their lines, by Postgres. Past the first page ordered by date, the summary's count per day
 * also finds the day the page starts on, so the scan skips part of one day instead of every
 * earlier sale. Each statement is compiled once per shape of the request (its filters, order).
 */
export async function listVentas(
  db: Db,
  empresaId: number,
  request: PagedVentasRequest,
): Promise<{ total: number; json: string; version: string }> {
  const at = await locatePage(db, empresaId, request);
  if (at.skip === undefined) return { total: at.total, json: '[]', version: pageVersion(db, at.total, '') };
  const [page] = await ventasPage(db, ...pageArguments(empresaId, request, at));
  return { total: at.total, json: page!.json, version: pageVersion(db, at.total, page!.stamps) };
}

/**
 * The `version` that `listVentas` would answer for the request, read without building the page:
 * the total and the page's ids with their change stamps. Every change of a sale (its lines, its
 * state, its returns) stamps its row, and the page is built from those rows alone, so one version
 * is always the same page: a conditional GET is answered from the index and a few rows.
 */
export async function ventasPageVersion(db: Db, empresaId: number, request: PagedVentasRequest): Promise<string> {
  const at = await locatePage(db, empresaId, request);
  if (at.skip === undefined) return pageVersion(db, at.total, '');
  const [page] = await ventasPageStamps(db, ...pageArguments(empresaId, request, at));
  return pageVersion(db, at.total, page!.stamps);
}

interface PageLocation {
  shape: ListShape;
  total: number;
  /** The first day of the page, when found from the summary's count per day. */
  from?: string;
  /** Rows to skip from there; none when the page is past the end. */
  skip?: number;
}

/**
 * Where a page starts. Past the first page ordered by date, the summary's count per day finds
 * the day the page starts on, so the scan skips part of one day instead of every earlier sale.
 */
async function locatePage(db: Db, empresaId: number, request: PagedVentasRequest): Promise<PageLocation> {
  const offset = (request.page - 1) * request.per_page;
  const shape = shapeOf(request);
  const { fecha_inicio, fecha_fin, estado } = request;
  // The first page starts at the first sale in any order: its total alone is one sum, without the days.
  if (request.order_by === 'fecha' && offset > 0) {
    const page = pageStart(await ventasPerDay(db, shape, empresaId, fecha_inicio, fecha_fin, estado), offset);
    return page.start ? { shape, total: page.total, from: page.start.fecha, skip: page.start.skip } : { shape, total: page.total };
  }
  const total = (await ventasCount(db, shape, empresaId, fecha_inicio, fecha_fin, estado))[0]!.total;
  return offset >= total ? { shape, total } : { shape, total, skip: offset };
}

function pageArguments(empresaId: number, request: PagedVentasRequest, at: PageLocation) {
  return [
    { ...at.shape, from: at.from !== undefined },
    empresaId,
    request.fecha_inicio,
    request.fecha_fin,
    request.estado,
    at.from,
    request.per_page,
    at.skip!,
  ] as const;
}

/** The SQL that serialises a sale: part of every version, so a release that changes the JSON changes every ETag. */
let ventaJsonRevision: string | undefined;

function pageVersion(db: Db, total: number, stamps: string): string {
  ventaJsonRevision ??= createHash('sha256')
    .update(db.selectFrom('ventas as v').select(ventaJson(db).as('venta')).compile().sql)
    .digest('base64url');
  return `${ventaJsonRevision}.${total}.${stamps}`;
}

/** Which filters a request has, not their values. */
type FilterShape = Record<keyof SummaryFilters, boolean>;

/** What decides the SQL of a list request: which filters it has and its order, not their values. */
interface ListShape extends FilterShape {
  order_by: SalesListRequest['order_by'];
  order_direction: SalesListRequest['order_direction'];
}

function shapeOf(request: AnsweredBySummary<PagedVentasRequest>): ListShape {
  return { ...filterShape(request, FILTERS), order_by: request.order_by, order_direction: request.order_direction };
}

/** The filters' values, as the statements below take them after the company. */
type FilterValues = [fechaInicio: string | undefined, fechaFin: string | undefined, estado: SalesFilters['estado']];

/** The filters of `shape`, with the values given (stand-ins while compiling). */
const filtersOf = (shape: FilterShape, ...[fecha_inicio, fecha_fin, estado]: FilterValues) =>
  shapedFilters(shape, { fecha_inicio, fecha_fin, estado });

const ventasCount = compiledPerShape((db: Db, shape: ListShape, empresaId: number, ...filters: FilterValues) =>
  summaryRows(db, empresaId, filtersOf(shape, ...filters)).select(sql<number>`coalesce(sum(r.cantidad), 0)::int8`.as('total')),
);

const ventasPerDay = compiledPerShape((db: Db, shape: ListShape, empresaId: number, ...filters: FilterValues) =>
  summaryRows(db, empresaId, filtersOf(shape, ...filters))
    .select(['r.fecha', sql<number>`sum(r.cantidad)::int8`.as('cantidad')])
    .groupBy('r.fecha')
    .having(sql`sum(r.cantidad)`, '>', 0)
    .orderBy('r.fecha', shape.order_direction),
);

/** The rows of one page, in the list's order: the page's ids from the narrow index, then their sales. */
function pageRows(
  db: Db,
  shape: ListShape & { from: boolean },
  empresaId: number,
  fechaInicio: string | undefined,
  fechaFin: string | undefined,
  estado: SalesFilters['estado'],
  from: string | undefined,
  limit: number,
  skip: number,
) {
  const dir = shape.order_direction;
  let ids = filteredVentas(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, estado)).select('v.id');
  if (shape.from) ids = ids.where('v.fecha', dir === 'desc' ? '<=' : '>=', from!);
  for (const term of orderTerms(shape.order_by)) ids = ids.orderBy(term, dir);
  let rows = db
    .selectFrom('ventas as v')
    .innerJoin(ids.limit(limit).offset(skip).as('p'), 'p.id', 'v.id')
    .where('v.empresa_id', '=', empresaId);
  for (const term of orderTerms(shape.order_by)) rows = rows.orderBy(term, dir);
  return rows;
}

/** Each row of the page as `id.stamp`, hashed: changes with any row of the page, or the page's rows. */
function stampsOf(rows: ReturnType<typeof pageRows>) {
  return sql<string>`md5(array_to_string(array(${rows.select(sql<string>`v.id::text || '.' || v.cambio_xid::text`.as('stamp'))}), ','))`;
}

/** The page's JSON and its stamps, in one statement: one snapshot for both. */
const ventasPage = compiledPerShape((db: Db, ...args: Parameters<typeof pageRows> extends [Db, ...infer A] ? A : never) => {
  const rows = pageRows(db, ...args);
  return db.selectNoFrom([sql<string>`${jsonArray(rows.select(ventaJson(db).as('venta')))}::text`.as('json'), stampsOf(rows).as('stamps')]);
});

const ventasPageStamps = compiledPerShape((db: Db, ...args: Parameters<typeof pageRows> extends [Db, ...infer A] ? A : never) =>
  db.selectNoFrom(stampsOf(pageRows(db, ...args)).as('stamps')),
);

/** Count and sums per state under the filters, from the daily summary; states without sales are left out. */
export async function summarizeVentas(db: Db, empresaId: number, filters: SalesFilters) {
  const answered: AnsweredBySummary<SalesFilters> = filters;
  const shape = filterShape(answered, FILTERS);
  return ventasSummaryRows(db, shape, empresaId, filters.fecha_inicio, filters.fecha_fin, filters.estado);
}

const ventasSummaryRows = compiledPerShape((db: Db, shape: FilterShape, empresaId: number, ...filters: FilterValues) =>
  summaryRows(db, empresaId, filtersOf(shape, ...filters))
    .select([
      'r.estado',
      sql<number>`sum(r.cantidad)::int`.as('cantidad'),
      sql<string>`sum(r.total)`.as('total'),
      sql<string>`sum(r.iva)`.as('iva'),
      sql<string>`sum(r.descuento)`.as('descuento'),
    ])
    .groupBy('r.estado')
    .having(sql`sum(r.cantidad)`, '>', 0),
);
