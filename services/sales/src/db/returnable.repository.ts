import type { Kysely } from 'kysely';
import type { ReturnableSale } from '@erp/contracts';
import type { SalesDb } from './tables';

/** A sale of the company with every line's price, cost and tax, for the returns service; undefined when not the company's. */
export async function findReturnableVenta(db: Kysely<SalesDb>, empresaId: number, id: number): Promise<ReturnableSale | undefined> {
  const venta = await db
    .selectFrom('ventas')
    .select(['id', 'estado', 'fecha', 'correlativo', 'bodega_id', 'nombre_cliente'])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!venta) return undefined;
  const detalles = await db
    .selectFrom('venta_detalles')
    .select([
      'id',
      'id_producto',
      'codigo',
      'nombre_producto',
      'descripcion',
      'mueve_stock',
      'cantidad',
      'precio',
      'descuento',
      'porcentaje_impuesto',
      'sub_total',
      'iva',
      'exenta',
      'total',
      'costo',
    ])
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', id)
    .orderBy('linea')
    .execute();
  const { bodega_id, ...rest } = venta;
  return { ...rest, id_bodega: bodega_id, detalles };
}
