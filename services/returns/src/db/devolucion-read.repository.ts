import { sql, type Kysely, type Transaction } from 'kysely';
import type { ReturnInput } from '@erp/contracts';
import { toDevolucion } from '../domain/devolucion-row';
import type { ReturnsDb } from './tables';

type Db = Kysely<ReturnsDb> | Transaction<ReturnsDb>;

/** The sale's returns made under any of the registration keys. */
export async function devolucionesByRegistro(
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

export async function findDevolucionIdByReferencia(db: Db, empresaId: number, referencia: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('devoluciones')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('referencia', '=', referencia)
    .executeTakeFirst();
  return row?.id;
}

/** Sale line id → quantity the sale's active returns took back. */
export async function devueltoByDetalle(db: Db, empresaId: number, ventaId: number): Promise<Map<number, string>> {
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

export async function findDevolucion(db: Db, empresaId: number, id: number): Promise<ReturnInput | undefined> {
  const row = await db
    .selectFrom('devoluciones as d')
    .select(DEVOLUCION_COLUMNS)
    .where('d.empresa_id', '=', empresaId)
    .where('d.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return toDevolucion(row, (await detallesOf(db, empresaId, [row.id])).get(row.id) ?? []);
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
export async function stockDetallesOf(db: Db, empresaId: number, id: number) {
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

/** A return's columns as reads answer it (`DevolucionRow`, without its lines), from `devoluciones as d`: `findDevolucion` and the feed share them. */
export const DEVOLUCION_COLUMNS = [
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

/** A line's columns as reads answer it, with its return's id to group by. */
export const DETALLE_COLUMNS = [
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

/** The lines of several returns in one query, grouped by return, in their order. */
export async function detallesOf(db: Db, empresaId: number, ids: readonly number[]): Promise<Map<number, ReturnInput['detalles']>> {
  const byDevolucion = new Map<number, ReturnInput['detalles']>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byDevolucion;
  const rows = await db
    .selectFrom('devolucion_detalles')
    .select(DETALLE_COLUMNS)
    .where('empresa_id', '=', empresaId)
    .where('devolucion_id', 'in', [...ids])
    .orderBy('devolucion_id')
    .orderBy('linea')
    .execute();
  for (const { devolucion_id, venta_detalle_id, ...detalle } of rows)
    byDevolucion.get(devolucion_id)?.push({ ...detalle, id_detalle_venta: venta_detalle_id });
  return byDevolucion;
}
