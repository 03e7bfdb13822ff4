import { sql, type Kysely } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { InventoryDb } from './tables';

/**
 * One product of the company with its stock in active warehouses of active branches, in one
 * round trip. Soft-deleted products are never found.
 */
export async function findProductWithStock(db: Kysely<InventoryDb>, empresaId: number, id: number) {
  return db
    .selectFrom('productos as p')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .where('p.empresa_id', '=', empresaId)
    .where('p.id', '=', id)
    .where('p.deleted_at', 'is', null)
    .select([
      'p.id',
      'p.nombre',
      'p.descripcion',
      'p.codigo',
      'p.barcode',
      'c.nombre as nombre_categoria',
      'p.precio',
      'p.costo',
      'p.costo_anterior',
      'p.costo_promedio',
      'p.marca',
      'p.tipo',
      sql<0 | 1>`p.enable::int`.as('enable'),
      'p.img',
      'p.created_at',
      'p.updated_at',
    ])
    .select((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('inventarios as i')
          .innerJoin('bodegas as b', 'b.id', 'i.bodega_id')
          .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
          .whereRef('i.producto_id', '=', 'p.id')
          .where('i.empresa_id', '=', empresaId)
          .where('b.activo', '=', true)
          .where('s.activo', '=', true)
          .select([
            'i.producto_id as id_producto',
            'i.bodega_id as id_bodega',
            's.id as id_sucursal',
            // Text keeps the decimals exact through JSON; the contract turns them into numbers.
            sql<string>`i.stock::text`.as('stock'),
            sql<string>`i.stock_minimo::text`.as('stock_minimo'),
            sql<string>`i.stock_maximo::text`.as('stock_maximo'),
            'i.nota',
            'b.nombre as nombre_bodega',
            's.nombre as nombre_sucursal',
            'i.created_at',
            'i.updated_at',
          ])
          .orderBy('i.bodega_id'),
      ).as('inventarios'),
    )
    .executeTakeFirst();
}
