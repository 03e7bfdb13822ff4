import { sql, type Kysely, type Transaction } from 'kysely';
import { compiledOnce, jsonArray, jsonDecimal, jsonObject, jsonTimestamp } from '@erp/db';
import type { SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

const ref = (column: string) => sql.ref(column);
const decimal = (column: string) => jsonDecimal(sql.ref(column));
const timestamp = (column: string) => jsonTimestamp(sql.ref(column));

/**
 * A sale of `ventas as v` with its lines as the JSON the API answers (the contract's `Sale`, field
 * for field and in its order), built by Postgres: reads pass it on as text.
 */
export function ventaJson(db: Db) {
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
