import { sql, type Kysely } from 'kysely';
import { compiledOnce, jsonArray, jsonDecimal, jsonObject, jsonTimestamp } from '@erp/db';
import type { InventoryDb } from './tables';

const ref = (column: string) => sql.ref(column);
const decimal = (column: string) => jsonDecimal(sql.ref(column));
const timestamp = (column: string) => jsonTimestamp(sql.ref(column));

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
        id_producto: ref('i.producto_id'),
        id_bodega: ref('i.bodega_id'),
        id_sucursal: ref('s.id'),
        stock: decimal('i.stock'),
        stock_minimo: decimal('i.stock_minimo'),
        stock_maximo: decimal('i.stock_maximo'),
        nota: ref('i.nota'),
        nombre_bodega: ref('b.nombre'),
        nombre_sucursal: ref('s.nombre'),
        ...(withTimestamps ? { created_at: timestamp('i.created_at'), updated_at: timestamp('i.updated_at') } : {}),
      }).as('entrada'),
    )
    .where(sql<boolean>`i.producto_id = p.id`)
    .where('i.empresa_id', '=', empresaId)
    .where('b.activo', '=', true)
    .where('s.activo', '=', true)
    .orderBy('i.bodega_id');
  return jsonObject({
    id: ref('p.id'),
    nombre: ref('p.nombre'),
    descripcion: ref('p.descripcion'),
    codigo: ref('p.codigo'),
    barcode: ref('p.barcode'),
    nombre_categoria: ref('c.nombre'),
    precio: decimal('p.precio'),
    costo: decimal('p.costo'),
    costo_anterior: decimal('p.costo_anterior'),
    costo_promedio: decimal('p.costo_promedio'),
    marca: ref('p.marca'),
    tipo: ref('p.tipo'),
    enable: sql`p.enable::int`,
    img: ref('p.img'),
    created_at: timestamp('p.created_at'),
    updated_at: timestamp('p.updated_at'),
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
