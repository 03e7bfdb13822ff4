import { sql, type Kysely, type Transaction } from 'kysely';
import { compiledOnce, jsonArray, jsonDecimal, jsonObject, jsonTimestamp } from '@erp/db';
import type { ReturnsDb } from './tables';

type Db = Kysely<ReturnsDb> | Transaction<ReturnsDb>;

const ref = (column: string) => sql.ref(column);
const decimal = (column: string) => jsonDecimal(sql.ref(column));
const timestamp = (column: string) => jsonTimestamp(sql.ref(column));

/**
 * A return of `devoluciones as d` with its lines as the JSON the API answers (the contract's
 * `Return`, field for field and in its order), built by Postgres: reads pass it on as text.
 */
export function devolucionJson(db: Db) {
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
