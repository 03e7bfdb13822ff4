import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { ReturnInput, ReturnsExportFilters, ReturnsFilters, ReturnsListRequest, TipoDevolucion } from '@erp/contracts';
import {
  compiledOnce,
  jsonLineBatch,
  compiledPerShape,
  jsonArray,
  jsonDecimal,
  jsonObject,
  jsonTimestamp,
  readChangePage,
  type ChangeCursor,
  type ChangePage,
} from '@erp/db';
import type { DevolucionDetallesTable, DevolucionesTable, ReturnsDb } from './tables';

type Db = Kysely<ReturnsDb> | Transaction<ReturnsDb>;

export const REFERENCIA_INDEX = 'devoluciones_empresa_referencia_key';

/**
 * Serialises the returns of one sale for the rest of the transaction: what active returns already
 * took is read after the lock, so concurrent returns of a sale cannot together exceed what was sold.
 */
export async function lockVentaDevoluciones(trx: Transaction<ReturnsDb>, empresaId: number, ventaId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`devoluciones:${empresaId}:${ventaId}`}, 0))`.execute(trx);
}

/** The lock of `lockVentaDevoluciones` if no transaction holds it: false while a return of the sale is being made. */
export async function tryLockVentaDevoluciones(trx: Transaction<ReturnsDb>, empresaId: number, ventaId: number): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_xact_lock(hashtextextended(${`devoluciones:${empresaId}:${ventaId}`}, 0)) as locked`.execute(trx);
  return rows[0]!.locked;
}

/** The sale's returns made under any of the registration keys. */
export async function returnsByRegistration(
  db: Db,
  empresaId: number,
  ventaId: number,
  claves: string[],
): Promise<Array<{ clave: string; id_devolucion: number; total: string }>> {
  const rows = await db
    .selectFrom('devoluciones')
    .select(['id', 'clave_registro', 'total'])
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', ventaId)
    .where('clave_registro', 'in', claves)
    .execute();
  return rows.map((r) => ({ clave: r.clave_registro!, id_devolucion: r.id, total: r.total }));
}

export async function findIdByReferencia(db: Db, empresaId: number, referencia: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('devoluciones')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('referencia', '=', referencia)
    .executeTakeFirst();
  return row?.id;
}

/** Sale line id → quantity the sale's active returns took back. */
export async function returnedByLine(db: Db, empresaId: number, ventaId: number): Promise<Map<number, string>> {
  const rows = await db
    .selectFrom('devolucion_detalles as dd')
    .innerJoin('devoluciones as d', 'd.id', 'dd.devolucion_id')
    .select(['dd.venta_detalle_id', sql<string>`sum(dd.cantidad)`.as('cantidad')])
    .where('d.empresa_id', '=', empresaId)
    .where('d.venta_id', '=', ventaId)
    .where('d.enable', '=', true)
    .groupBy('dd.venta_detalle_id')
    .execute();
  return new Map(rows.map((r) => [r.venta_detalle_id, r.cantidad]));
}

export async function insertDevolucion(trx: Transaction<ReturnsDb>, devolucion: Insertable<DevolucionesTable>): Promise<number> {
  const row = await trx.insertInto('devoluciones').values(devolucion).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function insertDetalles(trx: Transaction<ReturnsDb>, detalles: Insertable<DevolucionDetallesTable>[]): Promise<void> {
  if (detalles.length > 0) await trx.insertInto('devolucion_detalles').values(detalles).execute();
}

const RETURN_COLUMNS = [
  'd.id',
  'd.fecha',
  'd.correlativo',
  'd.tipo',
  'd.sub_total',
  'd.no_sujeta',
  'd.exenta',
  'd.cuenta_a_terceros',
  'd.total',
  'd.iva',
  'd.iva_retenido',
  'd.descuento',
  'd.observaciones',
  'd.enable',
  'd.venta_id',
  'd.nombre_cliente',
  'd.nombre_usuario',
  'd.nombre_documento',
  'd.created_at',
  'd.updated_at',
] as const;

const LINE_COLUMNS = [
  'id',
  'devolucion_id',
  'venta_detalle_id',
  'id_producto',
  'nombre_producto',
  'codigo_producto',
  'marca_producto',
  'descripcion',
  'cantidad',
  'precio',
  'costo',
  'descuento',
  'porcentaje_impuesto',
  'sub_total',
  'iva',
  'no_sujeta',
  'cuenta_a_terceros',
  'exenta',
  'total',
  'medida',
] as const;

interface DevolucionRow {
  id: number;
  fecha: string;
  correlativo: string;
  tipo: TipoDevolucion;
  sub_total: string;
  no_sujeta: string;
  exenta: string;
  cuenta_a_terceros: string;
  total: string;
  iva: string;
  iva_retenido: string;
  descuento: string;
  observaciones: string | null;
  enable: boolean;
  venta_id: number;
  nombre_cliente: string;
  nombre_usuario: string;
  nombre_documento: string;
  created_at: Date;
  updated_at: Date;
}

function toDevolucion({ venta_id, enable, observaciones, ...row }: DevolucionRow, detalles: ReturnInput['detalles']): ReturnInput {
  return {
    ...row,
    observaciones: observaciones ?? '',
    enable: enable ? 1 : 0,
    estado: enable ? 'Confirmada' : 'Anulada',
    id_venta: venta_id,
    detalles,
  };
}

/** The lines of several returns in one query, grouped by return, in their order. */
async function linesOf(db: Db, empresaId: number, ids: readonly number[]): Promise<Map<number, ReturnInput['detalles']>> {
  const byDevolucion = new Map<number, ReturnInput['detalles']>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byDevolucion;
  const rows = await db
    .selectFrom('devolucion_detalles')
    .select(LINE_COLUMNS)
    .where('empresa_id', '=', empresaId)
    .where('devolucion_id', 'in', [...ids])
    .orderBy('devolucion_id')
    .orderBy('linea')
    .execute();
  for (const { devolucion_id, venta_detalle_id, ...line } of rows)
    byDevolucion.get(devolucion_id)?.push({ ...line, id_detalle_venta: venta_detalle_id });
  return byDevolucion;
}

export async function findDevolucion(db: Db, empresaId: number, id: number): Promise<ReturnInput | undefined> {
  const row = await db
    .selectFrom('devoluciones as d')
    .select(RETURN_COLUMNS)
    .where('d.empresa_id', '=', empresaId)
    .where('d.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return toDevolucion(row, (await linesOf(db, empresaId, [row.id])).get(row.id) ?? []);
}

const ref = (column: string) => sql.ref(column);
const decimal = (column: string) => jsonDecimal(sql.ref(column));
const timestamp = (column: string) => jsonTimestamp(sql.ref(column));

/**
 * A return of `devoluciones as d` with its lines as the JSON the API answers (the contract's
 * `Return`, field for field and in its order), built by Postgres: reads pass it on as text.
 */
function returnJson(db: Db) {
  const detalles = db
    .selectFrom('devolucion_detalles as l')
    .select(
      jsonObject({
        id: ref('l.id'),
        id_detalle_venta: ref('l.venta_detalle_id'),
        id_producto: ref('l.id_producto'),
        nombre_producto: ref('l.nombre_producto'),
        codigo_producto: ref('l.codigo_producto'),
        marca_producto: ref('l.marca_producto'),
        descripcion: ref('l.descripcion'),
        cantidad: decimal('l.cantidad'),
        precio: decimal('l.precio'),
        costo: decimal('l.costo'),
        descuento: decimal('l.descuento'),
        porcentaje_impuesto: decimal('l.porcentaje_impuesto'),
        sub_total: decimal('l.sub_total'),
        iva: decimal('l.iva'),
        no_sujeta: decimal('l.no_sujeta'),
        cuenta_a_terceros: decimal('l.cuenta_a_terceros'),
        exenta: decimal('l.exenta'),
        total: decimal('l.total'),
        medida: ref('l.medida'),
      }).as('linea'),
    )
    .where(sql<boolean>`l.empresa_id = d.empresa_id and l.devolucion_id = d.id`)
    .orderBy('l.linea');
  return jsonObject({
    id: ref('d.id'),
    fecha: ref('d.fecha'),
    correlativo: ref('d.correlativo'),
    tipo: ref('d.tipo'),
    sub_total: decimal('d.sub_total'),
    no_sujeta: decimal('d.no_sujeta'),
    exenta: decimal('d.exenta'),
    cuenta_a_terceros: decimal('d.cuenta_a_terceros'),
    total: decimal('d.total'),
    iva: decimal('d.iva'),
    iva_retenido: decimal('d.iva_retenido'),
    descuento: decimal('d.descuento'),
    observaciones: sql`coalesce(d.observaciones, '')`,
    enable: sql`d.enable::int`,
    estado: sql`case when d.enable then 'Confirmada' else 'Anulada' end`,
    id_venta: ref('d.venta_id'),
    nombre_cliente: ref('d.nombre_cliente'),
    nombre_usuario: ref('d.nombre_usuario'),
    nombre_documento: ref('d.nombre_documento'),
    created_at: timestamp('d.created_at'),
    updated_at: timestamp('d.updated_at'),
    detalles: jsonArray(detalles),
  });
}

/** The return as the JSON `GET /returns/{id}` answers, in one statement; undefined when the company has no such return. */
export async function findReturnJson(db: Db, empresaId: number, id: number): Promise<string | undefined> {
  const [row] = await returnJsonStatement(db, empresaId, id);
  return row?.json;
}

const returnJsonStatement = compiledOnce((db: Db, empresaId: number, id: number) =>
  db
    .selectFrom('devoluciones as d')
    .select(sql<string>`${returnJson(db)}::text`.as('json'))
    .where('d.empresa_id', '=', empresaId)
    .where('d.id', '=', id),
);

function filtered(db: Db, empresaId: number, f: ReturnsFilters) {
  let q = db.selectFrom('devoluciones as d').where('d.empresa_id', '=', empresaId);
  if (f.fecha_inicio !== undefined) q = q.where('d.fecha', '>=', f.fecha_inicio);
  if (f.fecha_fin !== undefined) q = q.where('d.fecha', '<=', f.fecha_fin);
  if (f.id_venta !== undefined) q = q.where('d.venta_id', '=', f.id_venta);
  return q;
}

/**
 * Up to `limit` returns after id `afterId`, by id, as the JSON lines `GET /returns/{id}` answers
 * (the same SQL), with the filters of the list: one batch of an export's file.
 */
export async function returnExportBatch(
  trx: Transaction<ReturnsDb>,
  empresaId: number,
  filtros: ReturnsExportFilters,
  afterId: number,
  limit: number,
) {
  let rows = filtered(trx, empresaId, filtros).where('d.id', '>', afterId);
  if (filtros.updated_since !== undefined) rows = rows.where('d.updated_at', '>=', new Date(filtros.updated_since));
  const page = rows
    .select(['d.id', sql<string>`${returnJson(trx)}::text`.as('json')])
    .orderBy('d.id')
    .limit(limit);
  return jsonLineBatch(trx, page);
}

/** Which filters a request has, not their values: what decides the SQL of a list or summary. */
interface FilterShape {
  fecha_inicio: boolean;
  fecha_fin: boolean;
  id_venta: boolean;
}

function shapeOf(f: ReturnsFilters): FilterShape {
  return { fecha_inicio: f.fecha_inicio !== undefined, fecha_fin: f.fecha_fin !== undefined, id_venta: f.id_venta !== undefined };
}

/** The filters of `shape`, with the values given (stand-ins while compiling). */
function filtersOf(
  shape: FilterShape,
  fechaInicio: string | undefined,
  fechaFin: string | undefined,
  idVenta: number | undefined,
): ReturnsFilters {
  return {
    ...(shape.fecha_inicio ? { fecha_inicio: fechaInicio } : {}),
    ...(shape.fecha_fin ? { fecha_fin: fechaFin } : {}),
    ...(shape.id_venta ? { id_venta: idVenta } : {}),
  };
}

/**
 * One page of returns, newest `fecha` first then `id` descending, with their lines, as the JSON
 * array the API answers: the count and the page (serialised by Postgres) in two statements at
 * once, each compiled once per set of filters present.
 */
export async function listReturns(db: Db, empresaId: number, request: ReturnsListRequest): Promise<{ total: number; json: string }> {
  const shape = shapeOf(request);
  const { fecha_inicio, fecha_fin, id_venta } = request;
  const [[count], [page]] = await Promise.all([
    returnsCount(db, shape, empresaId, fecha_inicio, fecha_fin, id_venta),
    returnsPage(db, shape, empresaId, fecha_inicio, fecha_fin, id_venta, request.per_page, (request.page - 1) * request.per_page),
  ]);
  return { total: Number(count!.total), json: page!.json };
}

const returnsCount = compiledPerShape(
  (
    db: Db,
    shape: FilterShape,
    empresaId: number,
    fechaInicio: string | undefined,
    fechaFin: string | undefined,
    idVenta: number | undefined,
  ) => filtered(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, idVenta)).select((eb) => eb.fn.countAll<number>().as('total')),
);

const returnsPage = compiledPerShape(
  (
    db: Db,
    shape: FilterShape,
    empresaId: number,
    fechaInicio: string | undefined,
    fechaFin: string | undefined,
    idVenta: number | undefined,
    limit: number,
    offset: number,
  ) => {
    const rows = filtered(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, idVenta))
      .select(returnJson(db).as('devolucion'))
      .orderBy('d.fecha', 'desc')
      .orderBy('d.id', 'desc')
      .limit(limit)
      .offset(offset);
    return db.selectNoFrom(sql<string>`${jsonArray(rows)}::text`.as('json'));
  },
);

/** Count and sums per type of the active returns under the date filters, in one statement. */
export async function summarizeReturns(db: Db, empresaId: number, filters: Pick<ReturnsFilters, 'fecha_inicio' | 'fecha_fin'>) {
  return returnsSummaryRows(db, { ...shapeOf(filters), id_venta: false }, empresaId, filters.fecha_inicio, filters.fecha_fin);
}

const returnsSummaryRows = compiledPerShape(
  (db: Db, shape: FilterShape, empresaId: number, fechaInicio: string | undefined, fechaFin: string | undefined) =>
    filtered(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, undefined))
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

/** The return's row locked for its annulment. */
export async function lockDevolucion(trx: Transaction<ReturnsDb>, empresaId: number, id: number) {
  return trx
    .selectFrom('devoluciones')
    .select(['id', 'venta_id', 'enable', 'total'])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function annulDevolucion(trx: Transaction<ReturnsDb>, id: number): Promise<void> {
  const now = new Date();
  await trx.updateTable('devoluciones').set({ enable: false, anulada_at: now, updated_at: now }).where('id', '=', id).execute();
}

/** Where the stock of a return stands: what it owes inventory, if anything. */
export async function findStockState(db: Db, empresaId: number, id: number) {
  return db
    .selectFrom('devoluciones')
    .select(['id', 'venta_id', 'bodega_id', 'enable', 'clave_stock', 'stock_aplicado_at', 'stock_revertido_at'])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The stock the return put back, per product, in order of first appearance. */
export async function stockLinesOf(db: Db, empresaId: number, id: number) {
  return db
    .selectFrom('devolucion_detalles')
    .select(['id_producto', sql<string>`sum(cantidad)`.as('cantidad')])
    .where('empresa_id', '=', empresaId)
    .where('devolucion_id', '=', id)
    .where('mueve_stock', '=', true)
    .groupBy('id_producto')
    .orderBy(sql`min(linea)`)
    .execute();
}

export async function markStock(db: Db, id: number, column: 'stock_aplicado_at' | 'stock_revertido_at'): Promise<void> {
  await db
    .updateTable('devoluciones')
    .set({ [column]: new Date() })
    .where('id', '=', id)
    .where(column, 'is', null)
    .execute();
}

/**
 * Delta sync: one page of the company's returns changed after a position (see `readChangePage`),
 * with their lines. Run it in a repeatable-read transaction so rows,
 * lines and horizon share one snapshot.
 */
export async function listReturnChanges(
  trx: Transaction<ReturnsDb>,
  empresaId: number,
  request: ReturnsListRequest,
  after: ChangeCursor | undefined,
): Promise<ChangePage<ReturnInput>> {
  let q = filtered(trx, empresaId, request);
  if (request.updated_since !== undefined) q = q.where('d.updated_at', '>=', new Date(request.updated_since));
  const page = await readChangePage(q.select(RETURN_COLUMNS), { table: 'd', after, perPage: request.per_page });
  const lines = await linesOf(
    trx,
    empresaId,
    page.rows.map((r) => r.id),
  );
  return { ...page, rows: page.rows.map((r) => toDevolucion(r, lines.get(r.id) ?? [])) };
}
