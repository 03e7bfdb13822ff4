import { sql, type Kysely } from 'kysely';
import { compiledOnce, jsonArray, jsonDecimal, jsonObject, jsonTimestamp } from '@erp/db';
import type { InventoryDb } from './tables';

/**
 * A product of `productos as p` left-joined to `categorias as c`, with its entries in active
 * warehouses of active branches, as the JSON the API answers (the contract's `Product`, field for
 * field and in its order), built by Postgres: reads pass it on as text.
 */
export function productoJson(db: Kysely<InventoryDb>, empresaId: number, withTimestamps: boolean) {
  const inventarios = db
    .selectFrom('inventarios as i')
    .innerJoin('bodegas as b', 'b.id', 'i.bodega_id')
    .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
    .select(
      jsonObject({
        id_producto: 'i.producto_id',
        id_bodega: 'i.bodega_id',
        id_sucursal: 's.id',
        stock: jsonDecimal('i.stock'),
        stock_minimo: jsonDecimal('i.stock_minimo'),
        stock_maximo: jsonDecimal('i.stock_maximo'),
        nota: 'i.nota',
        nombre_bodega: 'b.nombre',
        nombre_sucursal: 's.nombre',
        ...(withTimestamps ? { created_at: jsonTimestamp('i.created_at'), updated_at: jsonTimestamp('i.updated_at') } : {}),
      }).as('entrada'),
    )
    .where(sql<boolean>`i.producto_id = p.id`)
    .where('i.empresa_id', '=', empresaId)
    .where('b.activo', '=', true)
    .where('s.activo', '=', true)
    .orderBy('i.bodega_id');
  return jsonObject({
    id: 'p.id',
    nombre: 'p.nombre',
    descripcion: 'p.descripcion',
    codigo: 'p.codigo',
    barcode: 'p.barcode',
    nombre_categoria: 'c.nombre',
    precio: jsonDecimal('p.precio'),
    costo: jsonDecimal('p.costo'),
    costo_anterior: jsonDecimal('p.costo_anterior'),
    costo_promedio: jsonDecimal('p.costo_promedio'),
    marca: 'p.marca',
    tipo: 'p.tipo',
    enable: sql`p.enable::int`,
    img: 'p.img',
    created_at: jsonTimestamp('p.created_at'),
    updated_at: jsonTimestamp('p.updated_at'),
    inventarios: jsonArray(inventarios),
  });
}

/** One product of the company as the JSON `GET /inventory/{id}` answers, its stock entries with their timestamps, in one statement. Soft-deleted products are never found. */
export async function findProductoJson(db: Kysely<InventoryDb>, empresaId: number, id: number): Promise<string | undefined> {
  const [row] = await productoJsonStatement(db, empresaId, id);
  return row?.json;
}

const productoJsonStatement = compiledOnce((db: Kysely<InventoryDb>, empresaId: number, id: number) =>
  db
    .selectFrom('productos as p')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .where('p.empresa_id', '=', empresaId)
    .where('p.id', '=', id)
    .where('p.deleted_at', 'is', null)
    .select(sql<string>`${productoJson(db, empresaId, true)}::text`.as('json')),
);
