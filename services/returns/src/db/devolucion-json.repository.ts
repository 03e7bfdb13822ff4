import { sql, type Kysely, type Transaction } from 'kysely';
import { compiledOnce, jsonArray, jsonDecimal, jsonObject, jsonTimestamp } from '@erp/db';
import type { ReturnsDb } from './tables';

type Db = Kysely<ReturnsDb> | Transaction<ReturnsDb>;

/**
 * A return of `devoluciones as d` with its lines as the JSON the API answers (the contract's
 * `Return`, field for field and in its order), built by Postgres: reads pass it on as text.
 */
export function devolucionJson(db: Db) {
  const detalles = db
    .selectFrom('devolucion_detalles as l')
    .select(
      jsonObject({
        id: 'l.id',
        id_detalle_venta: 'l.venta_detalle_id',
        id_producto: 'l.id_producto',
        nombre_producto: 'l.nombre_producto',
        codigo_producto: 'l.codigo_producto',
        marca_producto: 'l.marca_producto',
        descripcion: 'l.descripcion',
        cantidad: jsonDecimal('l.cantidad'),
        precio: jsonDecimal('l.precio'),
        costo: jsonDecimal('l.costo'),
        descuento: jsonDecimal('l.descuento'),
        porcentaje_impuesto: jsonDecimal('l.porcentaje_impuesto'),
        sub_total: jsonDecimal('l.sub_total'),
        iva: jsonDecimal('l.iva'),
        no_sujeta: jsonDecimal('l.no_sujeta'),
        cuenta_a_terceros: jsonDecimal('l.cuenta_a_terceros'),
        exenta: jsonDecimal('l.exenta'),
        total: jsonDecimal('l.total'),
        medida: 'l.medida',
      }).as('linea'),
    )
    .where(sql<boolean>`l.empresa_id = d.empresa_id and l.devolucion_id = d.id`)
    .orderBy('l.linea');
  return jsonObject({
    id: 'd.id',
    fecha: 'd.fecha',
    correlativo: 'd.correlativo',
    tipo: 'd.tipo',
    sub_total: jsonDecimal('d.sub_total'),
    no_sujeta: jsonDecimal('d.no_sujeta'),
    exenta: jsonDecimal('d.exenta'),
    cuenta_a_terceros: jsonDecimal('d.cuenta_a_terceros'),
    total: jsonDecimal('d.total'),
    iva: jsonDecimal('d.iva'),
    iva_retenido: jsonDecimal('d.iva_retenido'),
    descuento: jsonDecimal('d.descuento'),
    observaciones: sql`coalesce(d.observaciones, '')`,
    enable: sql`d.enable::int`,
    estado: sql`case when d.enable then 'Confirmada' else 'Anulada' end`,
    id_venta: 'd.venta_id',
    nombre_cliente: 'd.nombre_cliente',
    nombre_usuario: 'd.nombre_usuario',
    nombre_documento: 'd.nombre_documento',
    created_at: jsonTimestamp('d.created_at'),
    updated_at: jsonTimestamp('d.updated_at'),
    detalles: jsonArray(detalles),
  });
}

/** The return as the JSON `GET /returns/{id}` answers, in one statement; undefined when the company has no such return. */
export async function findDevolucionJson(db: Db, empresaId: number, id: number): Promise<string | undefined> {
  const [row] = await devolucionJsonStatement(db, empresaId, id);
  return row?.json;
}

const devolucionJsonStatement = compiledOnce((db: Db, empresaId: number, id: number) =>
  db
    .selectFrom('devoluciones as d')
    .select(sql<string>`${devolucionJson(db)}::text`.as('json'))
    .where('d.empresa_id', '=', empresaId)
    .where('d.id', '=', id),
);
