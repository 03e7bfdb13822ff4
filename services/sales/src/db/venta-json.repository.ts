import { sql, type Kysely, type Transaction } from 'kysely';
import { compiledOnce, jsonArray, jsonDecimal, jsonObject, jsonTimestamp } from '@erp/db';
import type { SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

/**
 * A sale of `ventas as v` with its lines as the JSON the API answers (the contract's `Sale`, field
 * for field and in its order), built by Postgres: reads pass it on as text.
 */
export function ventaJson(db: Db) {
  const detalles = db
    .selectFrom('venta_detalles as d')
    .select(
      jsonObject({
        id: 'd.id',
        id_producto: 'd.id_producto',
        codigo: 'd.codigo',
        nombre_producto: 'd.nombre_producto',
        descripcion: 'd.descripcion',
        cantidad: jsonDecimal('d.cantidad'),
        precio: jsonDecimal('d.precio'),
        descuento: jsonDecimal('d.descuento'),
        porcentaje_impuesto: jsonDecimal('d.porcentaje_impuesto'),
        sub_total: jsonDecimal('d.sub_total'),
        iva: jsonDecimal('d.iva'),
        exenta: jsonDecimal('d.exenta'),
        total: jsonDecimal('d.total'),
        created_at: jsonTimestamp('d.created_at'),
        updated_at: jsonTimestamp('d.updated_at'),
      }).as('linea'),
    )
    .where(sql<boolean>`d.empresa_id = v.empresa_id and d.venta_id = v.id`)
    .orderBy('d.linea');
  return jsonObject({
    id: 'v.id',
    fecha: 'v.fecha',
    correlativo: 'v.correlativo',
    referencia: 'v.referencia_externa',
    referencia_externa: 'v.referencia_externa',
    cotizacion: 'v.cotizacion',
    estado: 'v.estado',
    forma_pago: 'v.forma_pago',
    total: jsonDecimal('v.total'),
    iva: jsonDecimal('v.iva'),
    sub_total: jsonDecimal('v.sub_total'),
    descuento: jsonDecimal('v.descuento'),
    exenta: jsonDecimal('v.exenta'),
    monto_pago: jsonDecimal('v.monto_pago'),
    cambio: jsonDecimal('v.cambio'),
    // What the customer still owes once active returns are credited.
    saldo: jsonDecimal(sql`greatest(v.saldo - v.monto_devuelto, 0)`),
    nombre_cliente: 'v.nombre_cliente',
    nombre_usuario: 'v.nombre_usuario',
    nombre_vendedor: 'v.nombre_vendedor',
    id_sucursal: 'v.sucursal_id',
    id_bodega: 'v.bodega_id',
    id_documento: 'v.documento_id',
    nombre_documento: 'v.nombre_documento',
    id_canal: 'v.canal_id',
    id_cliente: 'v.cliente_id',
    fecha_expiracion: 'v.fecha_expiracion',
    observaciones: 'v.observaciones',
    documento_fiscal_emitido: 'v.documento_fiscal_emitido',
    created_at: jsonTimestamp('v.created_at'),
    updated_at: jsonTimestamp('v.updated_at'),
    detalles: jsonArray(detalles),
  });
}

/** The sale as the JSON `GET /sales/{id}` answers, in one statement; undefined when the company has no such sale. */
export async function findVentaJson(db: Db, empresaId: number, id: number): Promise<string | undefined> {
  const [row] = await ventaJsonStatement(db, empresaId, id);
  return row?.json;
}

const ventaJsonStatement = compiledOnce((db: Db, empresaId: number, id: number) =>
  db
    .selectFrom('ventas as v')
    .select(sql<string>`${ventaJson(db)}::text`.as('json'))
    .where('v.empresa_id', '=', empresaId)
    .where('v.id', '=', id),
);
