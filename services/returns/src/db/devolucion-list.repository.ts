import { sql, type Kysely, type Transaction } from 'kysely';
import type { ReturnsExportFilters, ReturnsFilters, ReturnsListRequest } from '@erp/contracts';
import { compiledPerShape, filterShape, jsonArray, shapedFilters } from '@erp/db';
import { devolucionJson } from './devolucion-json.repository';
import type { ReturnsDb } from './tables';

type Db = Kysely<ReturnsDb> | Transaction<ReturnsDb>;

/** The company's returns under the filters of the list (no columns selected yet). */
export function filteredDevoluciones(db: Db, empresaId: number, f: ReturnsFilters) {
  let q = db.selectFrom('devoluciones as d').where('d.empresa_id', '=', empresaId);
  if (f.fecha_inicio !== undefined) q = q.where('d.fecha', '>=', f.fecha_inicio);
  if (f.fecha_fin !== undefined) q = q.where('d.fecha', '<=', f.fecha_fin);
  if (f.id_venta !== undefined) q = q.where('d.venta_id', '=', f.id_venta);
  return q;
}

/**
 * The returns of an export, each its id and the JSON line `GET /returns/{id}` answers (the same
 * SQL), with the filters of the list: the rows its file is read from, batch by batch.
 */
export function devolucionExportRows(db: Db, empresaId: number, filtros: ReturnsExportFilters) {
  let rows = filteredDevoluciones(db, empresaId, filtros);
  if (filtros.updated_since !== undefined) rows = rows.where('d.updated_at', '>=', new Date(filtros.updated_since));
  return rows.select(['d.id', sql<string>`${devolucionJson(db)}::text`.as('json')]);
}

const FILTERS = ['fecha_inicio', 'fecha_fin', 'id_venta'] as const;

/** Which filters a request has, not their values: what decides the SQL of a list or summary. */
type FilterShape = Record<(typeof FILTERS)[number], boolean>;

/** The filters' values, as the statements below take them after the company. */
type FilterValues = [fechaInicio: string | undefined, fechaFin: string | undefined, idVenta: number | undefined];

/** The filters of `shape`, with the values given (stand-ins while compiling). */
const filtersOf = (shape: FilterShape, ...[fecha_inicio, fecha_fin, id_venta]: FilterValues): ReturnsFilters =>
  shapedFilters(shape, { fecha_inicio, fecha_fin, id_venta });

/**
 * One page of returns, newest `fecha` first then `id` descending, with their lines, as the JSON
 * array the API answers: the count and the page (serialised by Postgres) in two statements at
 * once, each compiled once per set of filters present.
 */
export async function listDevoluciones(db: Db, empresaId: number, request: ReturnsListRequest): Promise<{ total: number; json: string }> {
  const shape = filterShape(request, FILTERS);
  const filters: FilterValues = [request.fecha_inicio, request.fecha_fin, request.id_venta];
  const [[count], [page]] = await Promise.all([
    devolucionesCount(db, shape, empresaId, ...filters),
    devolucionesPage(db, shape, empresaId, request.per_page, (request.page - 1) * request.per_page, ...filters),
  ]);
  return { total: Number(count!.total), json: page!.json };
}

const devolucionesCount = compiledPerShape((db: Db, shape: FilterShape, empresaId: number, ...filters: FilterValues) =>
  filteredDevoluciones(db, empresaId, filtersOf(shape, ...filters)).select((eb) => eb.fn.countAll<number>().as('total')),
);

const devolucionesPage = compiledPerShape(
  (db: Db, shape: FilterShape, empresaId: number, limit: number, offset: number, ...filters: FilterValues) => {
    const rows = filteredDevoluciones(db, empresaId, filtersOf(shape, ...filters))
      .select(devolucionJson(db).as('devolucion'))
      .orderBy('d.fecha', 'desc')
      .orderBy('d.id', 'desc')
      .limit(limit)
      .offset(offset);
    return db.selectNoFrom(sql<string>`${jsonArray(rows)}::text`.as('json'));
  },
);

/** Count and sums per type of the active returns under the date filters, in one statement. */
export async function summarizeDevoluciones(db: Db, empresaId: number, filters: Pick<ReturnsFilters, 'fecha_inicio' | 'fecha_fin'>) {
  return devolucionesSummaryRows(
    db,
    { ...filterShape(filters, FILTERS), id_venta: false },
    empresaId,
    filters.fecha_inicio,
    filters.fecha_fin,
  );
}

const devolucionesSummaryRows = compiledPerShape(
  (db: Db, shape: FilterShape, empresaId: number, fechaInicio: string | undefined, fechaFin: string | undefined) =>
    filteredDevoluciones(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, undefined))
      .where('d.enable', '=', true)
      .select([
        'd.tipo',
        sql<number>`count(*)::int`.as('cantidad'),
        sql<string>`sum(d.total)`.as('total'),
        sql<string>`sum(d.iva)`.as('iva'),
        sql<string>`sum(d.descuento)`.as('descuento'),
      ])
      .groupBy('d.tipo'),
);
