import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { InventoryDb } from './tables';

type ProductoScope = ExpressionBuilder<InventoryDb & { p: InventoryDb['productos'] }, 'p'>;

/** Columns of the Product contract, read from `productos as p` left-joined to `categorias as c`. */
export const PRODUCTO_COLUMNS = [
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
] as const;

/** A product's entries in active warehouses of active branches, as one correlated sub-select. */
export function inventariosOf(eb: ProductoScope, empresaId: number, withTimestamps: boolean) {
  const base = eb
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
    ])
    .orderBy('i.bodega_id');
  return jsonArrayFrom(withTimestamps ? base.select(['i.created_at', 'i.updated_at']) : base).as('inventarios');
}

/** A product read with its stock entries, as the Product contract's input. */
export type ProductoWithStock = NonNullable<Awaited<ReturnType<typeof findProductoWithStock>>>;

/** One product of the company with its stock entries and their timestamps. Soft-deleted products are never found. */
export async function findProductoWithStock(db: Kysely<InventoryDb>, empresaId: number, id: number) {
  return db
    .selectFrom('productos as p')
    .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
    .where('p.empresa_id', '=', empresaId)
    .where('p.id', '=', id)
    .where('p.deleted_at', 'is', null)
    .select(PRODUCTO_COLUMNS)
    .select((eb) => inventariosOf(eb, empresaId, true))
    .executeTakeFirst();
}

/**
 * The company's live products with any of the ids, codes or barcodes asked for, with their
 * stock in one warehouse when `bodegaId` is given. Decimals stay exact strings.
 */
export async function findProductosForVenta(
  db: Kysely<InventoryDb>,
  empresaId: number,
  wanted: { ids: readonly number[]; codes: readonly string[] },
  bodegaId: number | undefined,
) {
  if (wanted.ids.length === 0 && wanted.codes.length === 0) return [];
  return db
    .selectFrom('productos as p')
    .leftJoin('inventarios as i', (join) =>
      join
        .onRef('i.producto_id', '=', 'p.id')
        .on('i.empresa_id', '=', empresaId)
        .on('i.bodega_id', '=', bodegaId ?? -1),
    )
    .where('p.empresa_id', '=', empresaId)
    .where('p.deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        ...(wanted.ids.length > 0 ? [eb('p.id', 'in', [...new Set(wanted.ids)])] : []),
        ...(wanted.codes.length > 0
          ? [eb('p.codigo', 'in', [...new Set(wanted.codes)]), eb('p.barcode', 'in', [...new Set(wanted.codes)])]
          : []),
      ]),
    )
    .select([
      'p.id',
      'p.codigo',
      'p.barcode',
      'p.nombre',
      'p.descripcion',
      'p.marca',
      'p.tipo',
      sql<0 | 1>`p.enable::int`.as('enable'),
      sql<string>`p.precio::text`.as('precio'),
      sql<string>`p.costo::text`.as('costo'),
      sql<string>`p.costo_promedio::text`.as('costo_promedio'),
      sql<string | null>`p.porcentaje_impuesto::text`.as('porcentaje_impuesto'),
      sql<string | null>`i.stock::text`.as('stock'),
    ])
    .orderBy('p.id')
    .execute();
}
