import { sql, type Kysely, type Transaction } from 'kysely';
import type { SaleInput } from '@erp/contracts';
import { toVenta } from '../domain/venta-row';
import type { SalesDb, VentasTable } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

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
  return (await findVentasReferenciadas(db, empresaId, [referencia])).get(referencia);
}

/** The company's sales with these references, by reference (those without a sale are absent). */
export async function findVentasReferenciadas(
  db: Db,
  empresaId: number,
  referencias: readonly string[],
): Promise<Map<string, VentaReferenciada>> {
  if (referencias.length === 0) return new Map();
  const rows = await db
    .selectFrom('ventas')
    .select(['id', 'correlativo', 'huella', 'referencia_externa'])
    .where('empresa_id', '=', empresaId)
    .where('referencia_externa', 'in', [...new Set(referencias)])
    .execute();
  return new Map(rows.map(({ referencia_externa, ...venta }) => [referencia_externa!, venta]));
}

/** The company's sales among `ids` as a read sees them, by id, in two statements. */
export async function findVentas(db: Db, empresaId: number, ids: readonly number[]): Promise<Map<number, SaleInput>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('ventas as v')
    .select(VENTA_COLUMNS)
    .where('v.empresa_id', '=', empresaId)
    .where('v.id', 'in', [...ids])
    .execute();
  const detalles = await detallesOf(
    db,
    empresaId,
    rows.map((r) => r.id),
  );
  return new Map(rows.map((row) => [row.id, toVenta(row, detalles.get(row.id) ?? [])]));
}

export async function ventaExistsWithClave(db: Db, empresaId: number, clave: string): Promise<boolean> {
  const row = await db
    .selectFrom('ventas')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('clave_reserva', '=', clave)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findVenta(db: Db, empresaId: number, id: number): Promise<SaleInput | undefined> {
  const row = await db
    .selectFrom('ventas as v')
    .select(VENTA_COLUMNS)
    .where('v.empresa_id', '=', empresaId)
    .where('v.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return toVenta(row, (await detallesOf(db, empresaId, [row.id])).get(row.id) ?? []);
}

export async function stockDetallesOf(db: Db, empresaId: number, ventaId: number) {
  return db
    .selectFrom('venta_detalles')
    .select(['id_producto', 'cantidad', 'mueve_stock'])
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', ventaId)
    .where('mueve_stock', '=', true)
    .orderBy('linea')
    .execute();
}

/** A sale's columns as reads answer it (`VentaRow`, without its lines), from `ventas as v`: issuing, `findVenta` and the feed share them. */
export const VENTA_COLUMNS = [
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

/** A line's columns as reads answer it, with its sale's id to group by. */
export const DETALLE_COLUMNS = [
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

/** The lines of several sales in one query, grouped by sale, in the order they were sent. */
export async function detallesOf(db: Db, empresaId: number, ventaIds: readonly number[]): Promise<Map<number, SaleInput['detalles']>> {
  const byVenta = new Map<number, SaleInput['detalles']>(ventaIds.map((id) => [id, []]));
  if (ventaIds.length === 0) return byVenta;
  const rows = await db
    .selectFrom('venta_detalles')
    .select(DETALLE_COLUMNS)
    .where('empresa_id', '=', empresaId)
    .where('venta_id', 'in', [...ventaIds])
    .orderBy('venta_id')
    .orderBy('linea')
    .execute();
  for (const { venta_id, ...detalle } of rows) byVenta.get(venta_id)?.push(detalle);
  return byVenta;
}
