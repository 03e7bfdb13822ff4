import { createHash } from 'node:crypto';
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { SaleInput, SalesExportFilters, SalesFilters, SalesListRequest } from '@erp/contracts';
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
import type { PlannedLine } from '../domain/sale-plan';
import { pageStart } from '../domain/summary';
import type { StoredSale } from '../domain/sale-update';
import { SALES_SCHEMA, type SalesDb, type VentaDetallesTable, type VentasTable } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

export const REFERENCIA_INDEX = 'ventas_empresa_referencia_key';

/** The company's sale with this reference, with its state; null when there is none. */
export async function findVentaByReferencia(
  db: Db,
  empresaId: number,
  referencia: string,
): Promise<{ id: number; estado: VentasTable['estado'] } | null> {
  return (
    (await db
      .selectFrom('ventas')
      .select(['id', 'estado'])
      .where('empresa_id', '=', empresaId)
      .where('referencia_externa', '=', referencia)
      .executeTakeFirst()) ?? null
  );
}

/** The company's sale with this reference as a retry needs it: its id, correlative and request fingerprint. */
export interface VentaReferenciada {
  id: number;
  correlativo: string;
  huella: string | null;
}

export async function findVentaReferenciada(db: Db, empresaId: number, referencia: string): Promise<VentaReferenciada | undefined> {
  return db
    .selectFrom('ventas')
    .select(['id', 'correlativo', 'huella'])
    .where('empresa_id', '=', empresaId)
    .where('referencia_externa', '=', referencia)
    .executeTakeFirst();
}

/**
 * Serialises the requests that carry one reference for the rest of the transaction, so a
 * concurrent duplicate waits for the first to commit and then finds its sale instead of
 * reserving stock it would have to give back. The unique index stays the guarantee.
 */
export async function lockReferencia(trx: Transaction<SalesDb>, empresaId: number, referencia: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`venta:${empresaId}:${referencia}`}, 0))`.execute(trx);
}

/**
 * An id for a sale about to be issued, taken before it is written so that the stock it reserves
 * first can name it. A sale that is not written after all leaves its id unused, as a rolled-back
 * insert does.
 */
export async function nextVentaId(db: Db): Promise<number> {
  const { rows } = await sql<{ id: number }>`select nextval(pg_get_serial_sequence(${`${SALES_SCHEMA}.ventas`}, 'id'))::int as id`.execute(
    db,
  );
  return rows[0]!.id;
}

/** A sale to issue: every column but those its document type's number decides (its `id` when it was taken before). */
export type VentaToIssue = Omit<Insertable<VentasTable>, 'numero' | 'correlativo' | 'nombre_documento' | 'documento'> & {
  /** The sale document; its `documento.numero` and `documento.correlativo` are filled in with the number taken. */
  documento: { documento: object };
};

/** A line of a sale to issue: every column but the sale's id. */
export type DetalleToIssue = Omit<Insertable<VentaDetallesTable>, 'venta_id'>;

const salesTable = (name: keyof SalesDb) => sql.table(`${SALES_SCHEMA}.${name}`);

/**
 * Issues a sale in one statement: takes its document type's next number (the row stays locked
 * until the transaction ends, so sales of one type are numbered one after another, and a sale
 * rolled back leaves its number to the next), writes the sale with it (`correlativo` is the
 * prefix of the locked row and the number, `nombre_documento` its name) and writes its lines.
 * Taken last in the transaction, the lock is held for this statement and the commit only.
 * Answers the sale as a read would see it, lines in order; undefined, with nothing written, when
 * the document type cannot issue it (missing, inactive, of another branch, only for quotations).
 */
export async function issueVenta(
  trx: Transaction<SalesDb>,
  venta: VentaToIssue,
  detalles: readonly DetalleToIssue[],
): Promise<SaleInput | undefined> {
  const columns = Object.keys(venta).filter((c) => c !== 'documento');
  const lineColumns = detalles.length > 0 ? Object.keys(detalles[0]!) : [];
  const { rows } = await sql<SaleRow & Record<`l_${(typeof LINE_COLUMNS)[number]}`, unknown>>`
    with doc as (
      update ${salesTable('documentos')} set correlativo = correlativo + 1, updated_at = now()
       where empresa_id = ${venta.empresa_id} and id = ${venta.documento_id} and activo and sucursal_id = ${venta.sucursal_id}
         and (not solo_cotizacion or ${venta.estado} = 'Cotizacion')
      returning nombre, prefijo, correlativo - 1 as numero
    ),
    v as (
      insert into ${salesTable('ventas')} (${sql.join(columns.map((c) => sql.id(c)))}, documento, numero, correlativo, nombre_documento)
      overriding system value
      select ${sql.join(columns.map((c) => sql.ref(`r.${c}`)))},
             jsonb_set(jsonb_set(r.documento, '{documento,numero}', to_jsonb(doc.numero)), '{documento,correlativo}', to_jsonb(doc.prefijo || doc.numero)),
             doc.numero, doc.prefijo || doc.numero, doc.nombre
        from doc, jsonb_populate_record(null::${salesTable('ventas')}, ${JSON.stringify(venta)}::jsonb) r
      returning *
    ),
    d as (
      insert into ${salesTable('venta_detalles')} (venta_id${sql.join(
        lineColumns.map((c) => sql`, ${sql.id(c)}`),
        sql``,
      )})
      select v.id${sql.join(
        lineColumns.map((c) => sql`, ${sql.ref(`l.${c}`)}`),
        sql``,
      )}
        from v, jsonb_populate_recordset(null::${salesTable('venta_detalles')}, ${JSON.stringify(detalles)}::jsonb) l
      returning linea, ${sql.join(LINE_COLUMNS.map((c) => sql.id(c)))}
    )
    select ${sql.join(SALE_COLUMNS.map((c) => (typeof c === 'string' ? sql.ref(c) : c)))},
           ${sql.join(LINE_COLUMNS.map((c) => sql`${sql.ref(`d.${c}`)} as ${sql.id(`l_${c}`)}`))}
      from v left join d on true
     order by d.linea`.execute(trx);
  const first = rows[0];
  if (!first) return undefined;
  const detallesStored = rows.flatMap((row) => {
    if (row.l_id === null) return [];
    const line = Object.fromEntries(LINE_COLUMNS.filter((c) => c !== 'venta_id').map((c) => [c, row[`l_${c}`]]));
    return [line as SaleInput['detalles'][number]];
  });
  return toSale(first, detallesStored);
}

/** The stored columns of a planned line, as creation and update both write them. */
export function detalleColumns(line: PlannedLine, empresaId: number) {
  return {
    empresa_id: empresaId,
    linea: line.index,
    id_producto: line.producto.id,
    codigo: line.producto.codigo,
    nombre_producto: line.producto.nombre,
    descripcion: line.producto.descripcion,
    mueve_stock: line.mueve_stock,
    id_presentacion: line.id_presentacion,
    cantidad: line.cantidad,
    precio: line.precio,
    descuento: line.descuento,
    porcentaje_impuesto: line.porcentaje_impuesto,
    sub_total: line.sub_total,
    iva: line.iva,
    total: line.total,
    exenta: line.exenta,
    costo: line.costo,
  };
}

export async function saleExistsWithClave(db: Db, empresaId: number, clave: string): Promise<boolean> {
  const row = await db
    .selectFrom('ventas')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('clave_reserva', '=', clave)
    .executeTakeFirst();
  return row !== undefined;
}

const SALE_COLUMNS = [
  'v.id',
  'v.fecha',
  'v.correlativo',
  'v.referencia_externa',
  'v.cotizacion',
  'v.estado',
  'v.forma_pago',
  'v.total',
  'v.iva',
  'v.sub_total',
  'v.descuento',
  'v.exenta',
  'v.monto_pago',
  'v.cambio',
  // What the customer still owes once active returns are credited.
  sql<string>`greatest(v.saldo - v.monto_devuelto, 0)`.as('saldo'),
  'v.nombre_cliente',
  'v.nombre_usuario',
  'v.nombre_vendedor',
  'v.sucursal_id',
  'v.bodega_id',
  'v.documento_id',
  'v.nombre_documento',
  'v.canal_id',
  'v.cliente_id',
  'v.fecha_expiracion',
  'v.observaciones',
  'v.documento_fiscal_emitido',
  'v.created_at',
  'v.updated_at',
] as const;

const LINE_COLUMNS = [
  'id',
  'venta_id',
  'id_producto',
  'codigo',
  'nombre_producto',
  'descripcion',
  'cantidad',
  'precio',
  'descuento',
  'porcentaje_impuesto',
  'sub_total',
  'iva',
  'exenta',
  'total',
  'created_at',
  'updated_at',
] as const;

type SaleRow = Pick<
  VentasTable,
  | 'fecha'
  | 'correlativo'
  | 'referencia_externa'
  | 'cotizacion'
  | 'estado'
  | 'forma_pago'
  | 'total'
  | 'iva'
  | 'sub_total'
  | 'descuento'
  | 'exenta'
  | 'monto_pago'
  | 'cambio'
  | 'saldo'
  | 'nombre_cliente'
  | 'nombre_usuario'
  | 'nombre_vendedor'
  | 'sucursal_id'
  | 'bodega_id'
  | 'documento_id'
  | 'nombre_documento'
  | 'canal_id'
  | 'cliente_id'
  | 'fecha_expiracion'
  | 'observaciones'
> & {
  id: number;
  documento_fiscal_emitido: boolean;
  created_at: Date;
  updated_at: Date;
};

export function toSale(row: SaleRow, detalles: SaleInput['detalles']): SaleInput {
  return {
    id: row.id,
    fecha: row.fecha,
    correlativo: row.correlativo,
    referencia: row.referencia_externa,
    referencia_externa: row.referencia_externa,
    cotizacion: row.cotizacion,
    estado: row.estado,
    forma_pago: row.forma_pago,
    total: row.total,
    iva: row.iva,
    sub_total: row.sub_total,
    descuento: row.descuento,
    exenta: row.exenta,
    monto_pago: row.monto_pago,
    cambio: row.cambio,
    saldo: row.saldo,
    nombre_cliente: row.nombre_cliente,
    nombre_usuario: row.nombre_usuario,
    nombre_vendedor: row.nombre_vendedor,
    id_sucursal: row.sucursal_id,
    id_bodega: row.bodega_id,
    id_documento: row.documento_id,
    nombre_documento: row.nombre_documento,
    id_canal: row.canal_id,
    id_cliente: row.cliente_id,
    fecha_expiracion: row.fecha_expiracion,
    observaciones: row.observaciones,
    documento_fiscal_emitido: row.documento_fiscal_emitido,
    created_at: row.created_at,
    updated_at: row.updated_at,
    detalles,
  };
}

/** The lines of several sales in one query, grouped by sale, in the order they were sent. */
async function linesOf(db: Db, empresaId: number, ventaIds: readonly number[]): Promise<Map<number, SaleInput['detalles']>> {
  const byVenta = new Map<number, SaleInput['detalles']>(ventaIds.map((id) => [id, []]));
  if (ventaIds.length === 0) return byVenta;
  const rows = await db
    .selectFrom('venta_detalles')
    .select(LINE_COLUMNS)
    .where('empresa_id', '=', empresaId)
    .where('venta_id', 'in', [...ventaIds])
    .orderBy('venta_id')
    .orderBy('linea')
    .execute();
  for (const { venta_id, ...line } of rows) byVenta.get(venta_id)?.push(line);
  return byVenta;
}

const ref = (column: string) => sql.ref(column);
const decimal = (column: string) => jsonDecimal(sql.ref(column));
const timestamp = (column: string) => jsonTimestamp(sql.ref(column));

/**
 * A sale of `ventas as v` with its lines as the JSON the API answers (the contract's `Sale`, field
 * for field and in its order), built by Postgres: reads pass it on as text.
 */
function saleJson(db: Db) {
  const detalles = db
    .selectFrom('venta_detalles as d')
    .select(
      jsonObject({
        id: ref('d.id'),
        id_producto: ref('d.id_producto'),
        codigo: ref('d.codigo'),
        nombre_producto: ref('d.nombre_producto'),
        descripcion: ref('d.descripcion'),
        cantidad: decimal('d.cantidad'),
        precio: decimal('d.precio'),
        descuento: decimal('d.descuento'),
        porcentaje_impuesto: decimal('d.porcentaje_impuesto'),
        sub_total: decimal('d.sub_total'),
        iva: decimal('d.iva'),
        exenta: decimal('d.exenta'),
        total: decimal('d.total'),
        created_at: timestamp('d.created_at'),
        updated_at: timestamp('d.updated_at'),
      }).as('linea'),
    )
    .where(sql<boolean>`d.empresa_id = v.empresa_id and d.venta_id = v.id`)
    .orderBy('d.linea');
  return jsonObject({
    id: ref('v.id'),
    fecha: ref('v.fecha'),
    correlativo: ref('v.correlativo'),
    referencia: ref('v.referencia_externa'),
    referencia_externa: ref('v.referencia_externa'),
    cotizacion: ref('v.cotizacion'),
    estado: ref('v.estado'),
    forma_pago: ref('v.forma_pago'),
    total: decimal('v.total'),
    iva: decimal('v.iva'),
    sub_total: decimal('v.sub_total'),
    descuento: decimal('v.descuento'),
    exenta: decimal('v.exenta'),
    monto_pago: decimal('v.monto_pago'),
    cambio: decimal('v.cambio'),
    // What the customer still owes once active returns are credited.
    saldo: jsonDecimal(sql`greatest(v.saldo - v.monto_devuelto, 0)`),
    nombre_cliente: ref('v.nombre_cliente'),
    nombre_usuario: ref('v.nombre_usuario'),
    nombre_vendedor: ref('v.nombre_vendedor'),
    id_sucursal: ref('v.sucursal_id'),
    id_bodega: ref('v.bodega_id'),
    id_documento: ref('v.documento_id'),
    nombre_documento: ref('v.nombre_documento'),
    id_canal: ref('v.canal_id'),
    id_cliente: ref('v.cliente_id'),
    fecha_expiracion: ref('v.fecha_expiracion'),
    observaciones: ref('v.observaciones'),
    documento_fiscal_emitido: ref('v.documento_fiscal_emitido'),
    created_at: timestamp('v.created_at'),
    updated_at: timestamp('v.updated_at'),
    detalles: jsonArray(detalles),
  });
}

/** The sale as the JSON `GET /sales/{id}` answers, in one statement; undefined when the company has no such sale. */
export async function findSaleJson(db: Db, empresaId: number, id: number): Promise<string | undefined> {
  const [row] = await saleJsonStatement(db, empresaId, id);
  return row?.json;
}

const saleJsonStatement = compiledOnce((db: Db, empresaId: number, id: number) =>
  db
    .selectFrom('ventas as v')
    .select(sql<string>`${saleJson(db)}::text`.as('json'))
    .where('v.empresa_id', '=', empresaId)
    .where('v.id', '=', id),
);

export async function findSale(db: Db, empresaId: number, id: number): Promise<SaleInput | undefined> {
  const row = await db
    .selectFrom('ventas as v')
    .select(SALE_COLUMNS)
    .where('v.empresa_id', '=', empresaId)
    .where('v.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return toSale(row, (await linesOf(db, empresaId, [row.id])).get(row.id) ?? []);
}

function filtered(db: Db, empresaId: number, f: SalesFilters) {
  let q = db.selectFrom('ventas as v').where('v.empresa_id', '=', empresaId);
  if (f.fecha_inicio !== undefined) q = q.where('v.fecha', '>=', f.fecha_inicio);
  if (f.fecha_fin !== undefined) q = q.where('v.fecha', '<=', f.fecha_fin);
  if (f.estado !== undefined) q = q.where('v.estado', '=', f.estado);
  return q;
}

/** The company's sales under the filters of the list, each with the JSON `GET /sales/{id}` answers (the same SQL): an export's rows. */
export function saleExportRows(db: Db, empresaId: number, filtros: SalesExportFilters) {
  let rows = filtered(db, empresaId, filtros);
  if (filtros.updated_since !== undefined) rows = rows.where('v.updated_at', '>=', new Date(filtros.updated_since));
  return rows.select(['v.id', sql<string>`${saleJson(db)}::text`.as('json')]);
}

/** Up to `limit` rows of an export after id `afterId`, by id: one batch of its file. */
export async function saleExportBatch(
  trx: Transaction<SalesDb>,
  empresaId: number,
  filtros: SalesExportFilters,
  afterId: number,
  limit: number,
) {
  const page = saleExportRows(trx, empresaId, filtros).where('v.id', '>', afterId).orderBy('v.id').limit(limit);
  return jsonLineBatch(trx, page);
}

type SummaryFilters = Pick<SalesFilters, 'fecha_inicio' | 'fecha_fin' | 'estado'>;
/** A list request paged by number (delta sync, by change, is `listSaleChanges`). */
export type PagedSalesRequest = Omit<SalesListRequest, 'updated_since' | 'cursor'>;
/**
 * `T` when each of its filters is one the daily summary answers, never otherwise: a filter added
 * to the list or summary request makes the calls below fail to compile, since its count would
 * then need count(*) over ventas.
 */
type AnsweredBySummary<T> = [Exclude<keyof T, keyof SummaryFilters | 'page' | 'per_page' | 'order_by' | 'order_direction'>] extends [never]
  ? T
  : never;

/** The daily summary rows under the filters. */
function summaryRows(db: Db, empresaId: number, f: AnsweredBySummary<PagedSalesRequest> | AnsweredBySummary<SalesFilters>) {
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
export async function listSales(
  db: Db,
  empresaId: number,
  request: PagedSalesRequest,
): Promise<{ total: number; json: string; version: string }> {
  const at = await locatePage(db, empresaId, request);
  if (at.skip === undefined) return { total: at.total, json: '[]', version: pageVersion(db, at.total, '') };
  const [page] = await salesPage(db, ...pageArguments(empresaId, request, at));
  return { total: at.total, json: page!.json, version: pageVersion(db, at.total, page!.stamps) };
}

/**
 * The `version` that `listSales` would answer for the request, read without building the page:
 * the total and the page's ids with their change stamps. Every change of a sale (its lines, its
 * state, its returns) stamps its row, and the page is built from those rows alone, so one version
 * is always the same page: a conditional GET is answered from the index and a few rows.
 */
export async function salesPageVersion(db: Db, empresaId: number, request: PagedSalesRequest): Promise<string> {
  const at = await locatePage(db, empresaId, request);
  if (at.skip === undefined) return pageVersion(db, at.total, '');
  const [page] = await salesPageStamps(db, ...pageArguments(empresaId, request, at));
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
async function locatePage(db: Db, empresaId: number, request: PagedSalesRequest): Promise<PageLocation> {
  const offset = (request.page - 1) * request.per_page;
  const shape = shapeOf(request);
  const { fecha_inicio, fecha_fin, estado } = request;
  // The first page starts at the first sale in any order: its total alone is one sum, without the days.
  if (request.order_by === 'fecha' && offset > 0) {
    const page = pageStart(await salesPerDay(db, shape, empresaId, fecha_inicio, fecha_fin, estado), offset);
    return page.start ? { shape, total: page.total, from: page.start.fecha, skip: page.start.skip } : { shape, total: page.total };
  }
  const total = (await salesCount(db, shape, empresaId, fecha_inicio, fecha_fin, estado))[0]!.total;
  return offset >= total ? { shape, total } : { shape, total, skip: offset };
}

function pageArguments(empresaId: number, request: PagedSalesRequest, at: PageLocation) {
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
let saleJsonRevision: string | undefined;

function pageVersion(db: Db, total: number, stamps: string): string {
  saleJsonRevision ??= createHash('sha256')
    .update(db.selectFrom('ventas as v').select(saleJson(db).as('venta')).compile().sql)
    .digest('base64url');
  return `${saleJsonRevision}.${total}.${stamps}`;
}

/** What decides the SQL of a list request: which filters it has and its order, not their values. */
interface ListShape {
  fecha_inicio: boolean;
  fecha_fin: boolean;
  estado: boolean;
  order_by: SalesListRequest['order_by'];
  order_direction: SalesListRequest['order_direction'];
}

function shapeOf(request: AnsweredBySummary<PagedSalesRequest>): ListShape {
  return {
    fecha_inicio: request.fecha_inicio !== undefined,
    fecha_fin: request.fecha_fin !== undefined,
    estado: request.estado !== undefined,
    order_by: request.order_by,
    order_direction: request.order_direction,
  };
}

type FilterShape = Pick<ListShape, 'fecha_inicio' | 'fecha_fin' | 'estado'>;

/** The filters of `shape`, with the values given (stand-ins while compiling). */
function filtersOf(shape: FilterShape, fechaInicio: string | undefined, fechaFin: string | undefined, estado: SalesFilters['estado']) {
  return {
    ...(shape.fecha_inicio ? { fecha_inicio: fechaInicio } : {}),
    ...(shape.fecha_fin ? { fecha_fin: fechaFin } : {}),
    ...(shape.estado ? { estado } : {}),
  };
}

const salesCount = compiledPerShape(
  (
    db: Db,
    shape: ListShape,
    empresaId: number,
    fechaInicio: string | undefined,
    fechaFin: string | undefined,
    estado: SalesFilters['estado'],
  ) =>
    summaryRows(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, estado)).select(
      sql<number>`coalesce(sum(r.cantidad), 0)::int8`.as('total'),
    ),
);

const salesPerDay = compiledPerShape(
  (
    db: Db,
    shape: ListShape,
    empresaId: number,
    fechaInicio: string | undefined,
    fechaFin: string | undefined,
    estado: SalesFilters['estado'],
  ) =>
    summaryRows(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, estado))
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
  let ids = filtered(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, estado)).select('v.id');
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
const salesPage = compiledPerShape((db: Db, ...args: Parameters<typeof pageRows> extends [Db, ...infer A] ? A : never) => {
  const rows = pageRows(db, ...args);
  return db.selectNoFrom([sql<string>`${jsonArray(rows.select(saleJson(db).as('venta')))}::text`.as('json'), stampsOf(rows).as('stamps')]);
});

const salesPageStamps = compiledPerShape((db: Db, ...args: Parameters<typeof pageRows> extends [Db, ...infer A] ? A : never) =>
  db.selectNoFrom(stampsOf(pageRows(db, ...args)).as('stamps')),
);

/** Count and sums per state under the filters, from the daily summary; states without sales are left out. */
export async function summarizeSales(db: Db, empresaId: number, filters: SalesFilters) {
  const answered: AnsweredBySummary<SalesFilters> = filters;
  const shape = {
    fecha_inicio: answered.fecha_inicio !== undefined,
    fecha_fin: answered.fecha_fin !== undefined,
    estado: answered.estado !== undefined,
  };
  return salesSummaryRows(db, shape, empresaId, filters.fecha_inicio, filters.fecha_fin, filters.estado);
}

const salesSummaryRows = compiledPerShape(
  (
    db: Db,
    shape: FilterShape,
    empresaId: number,
    fechaInicio: string | undefined,
    fechaFin: string | undefined,
    estado: SalesFilters['estado'],
  ) =>
    summaryRows(db, empresaId, filtersOf(shape, fechaInicio, fechaFin, estado))
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

/** The sale row locked for a back-office change, with what annulling needs. */
export async function lockVenta(trx: Transaction<SalesDb>, empresaId: number, id: number) {
  return trx
    .selectFrom('ventas')
    .select([
      'id',
      'estado',
      'origen',
      'referencia_externa',
      'bodega_id',
      'stock_devuelto_at',
      'clave_reserva',
      'revision_stock',
      'devoluciones_activas',
    ])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function stockLinesOf(db: Db, empresaId: number, ventaId: number) {
  return db
    .selectFrom('venta_detalles')
    .select(['id_producto', 'cantidad', 'mueve_stock'])
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', ventaId)
    .where('mueve_stock', '=', true)
    .orderBy('linea')
    .execute();
}

export async function updateVenta(
  trx: Transaction<SalesDb>,
  id: number,
  changes: Partial<Pick<VentasTable, 'estado' | 'saldo' | 'stock_devuelto_at'>> & {
    documento_fiscal_emitido?: boolean;
    revision_stock?: number;
  },
): Promise<void> {
  await trx
    .updateTable('ventas')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

export type EditableVenta = StoredSale & { origen: string; numero: number; correlativo: string; created_at: Date };

/**
 * The sale an update starts from, with its lines, its row locked until the transaction ends:
 * updates, annulments and fiscal marks of one sale happen one after another. The lines take a
 * second statement on purpose: after waiting for the lock it sees the lines the previous holder
 * committed, where a join in the locking statement would answer those of its own older snapshot.
 */
export async function lockVentaForEdit(trx: Transaction<SalesDb>, empresaId: number, id: number): Promise<EditableVenta | undefined> {
  const venta = await trx
    .selectFrom('ventas')
    .select([
      'id',
      'estado',
      'origen',
      'documento_fiscal_emitido',
      'referencia_externa',
      'fecha',
      'fecha_expiracion',
      'forma_pago',
      'observaciones',
      'sucursal_id',
      'bodega_id',
      'documento_id',
      'documento_emisor_id',
      'canal_id',
      'cliente_id',
      'usuario_id',
      'nombre_usuario',
      'monto_pago',
      'cambio',
      'saldo',
      'revision_stock',
      'devoluciones_activas',
      'numero',
      'correlativo',
      'created_at',
    ])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!venta) return undefined;
  const lines = await trx
    .selectFrom('venta_detalles')
    .select(['id', 'id_producto', 'cantidad', 'precio', 'descuento', 'porcentaje_impuesto', 'id_presentacion', 'mueve_stock'])
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', id)
    .orderBy('linea')
    .execute();
  return { ...venta, lines };
}

export type EditedVenta = Omit<
  Updateable<VentasTable>,
  'id' | 'empresa_id' | 'numero' | 'correlativo' | 'referencia_externa' | 'clave_reserva' | 'created_at'
>;

export async function saveEditedVenta(trx: Transaction<SalesDb>, id: number, venta: EditedVenta): Promise<void> {
  await trx.updateTable('ventas').set(venta).where('id', '=', id).execute();
}

export type DetalleRow = Omit<Insertable<VentaDetallesTable>, 'id' | 'created_at'>;

/**
 * Replaces the lines of a sale in one statement: a row with `id` updates that line of the sale in
 * place (only if something changed: an untouched line keeps its `updated_at`), a row without one
 * is inserted, and the sale's other lines are deleted.
 */
export async function replaceDetalles(
  trx: Transaction<SalesDb>,
  ventaId: number,
  rows: ReadonlyArray<DetalleRow & { id: number | null }>,
): Promise<void> {
  const kept = rows.flatMap((r) => (r.id !== null ? [r] : []));
  const added = rows.filter((r) => r.id === null).map(({ id: _id, ...row }) => row);
  const columns = rows.length > 0 ? Object.keys(rows[0]!).filter((c) => c !== 'id') : [];
  const compared = columns.filter((c) => c !== 'updated_at');
  const table = salesTable('venta_detalles');
  const list = (prefix: string, names: readonly string[]) => sql.join(names.map((c) => sql.ref(`${prefix}.${c}`)));
  await sql`
    with removed as (
      delete from ${table} where venta_id = ${ventaId} and not (id = any(${kept.map((r) => r.id)}::int[]))
    ),
    changed as (
      update ${table} d set (${sql.join(columns.map((c) => sql.id(c)))}) = (${list('x', columns)})
        from jsonb_populate_recordset(null::${table}, ${JSON.stringify(kept)}::jsonb) x
       where d.id = x.id and d.venta_id = ${ventaId} and (${list('d', compared)}) is distinct from (${list('x', compared)})
    )
    insert into ${table} (${sql.join(columns.map((c) => sql.id(c)))})
    select ${list('x', columns)} from jsonb_populate_recordset(null::${table}, ${JSON.stringify(added)}::jsonb) x`.execute(trx);
}

/**
 * Delta sync: one page of the company's sales changed after a position (see `readChangePage`),
 * with their lines. Run it in a repeatable-read transaction: the rows,
 * their lines and the horizon then come from one snapshot.
 */
export async function listSaleChanges(
  trx: Transaction<SalesDb>,
  empresaId: number,
  request: SalesListRequest,
  after: ChangeCursor | undefined,
): Promise<ChangePage<SaleInput>> {
  let q = filtered(trx, empresaId, request);
  if (request.updated_since !== undefined) q = q.where('v.updated_at', '>=', new Date(request.updated_since));
  const page = await readChangePage(q.select(SALE_COLUMNS), { table: 'v', after, perPage: request.per_page });
  const lines = await linesOf(
    trx,
    empresaId,
    page.rows.map((r) => r.id),
  );
  return { ...page, rows: page.rows.map((r) => toSale(r, lines.get(r.id) ?? [])) };
}
