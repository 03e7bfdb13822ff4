import { sql, type Kysely } from 'kysely';
import { SIN_CATEGORIA } from '@erp/contracts';
import type { InventoryDb } from '../src/db/tables';

/**
 * The inventory summary aggregated straight from the rows, as the service computed it before the
 * counters existed: the oracle the counters must always equal. Per product, its active entries
 * are folded first (stock, value, with/low stock flags), so every count is over products.
 */
export async function summarizeByDirectAggregate(db: Kysely<InventoryDb>, empresaId: number) {
  const perProduct = db
    .with('live', (qb) =>
      qb
        .selectFrom('productos')
        .select(['id', 'enable', 'categoria_id', 'costo_promedio'])
        .where('empresa_id', '=', empresaId)
        .where('deleted_at', 'is', null),
    )
    .with('entries', (qb) =>
      qb
        .selectFrom('inventarios as i')
        .innerJoin('bodegas as b', 'b.id', 'i.bodega_id')
        .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
        .innerJoin('live as l', 'l.id', 'i.producto_id')
        .where('i.empresa_id', '=', empresaId)
        .where('b.activo', '=', true)
        .where('s.activo', '=', true)
        .groupBy('i.producto_id')
        .select([
          'i.producto_id',
          sql<string>`sum(i.stock)`.as('stock'),
          sql<string>`sum(i.stock * l.costo_promedio)`.as('valor'),
          sql<boolean>`bool_or(i.stock > 0)`.as('con_stock'),
          sql<boolean>`bool_or(i.stock <= i.stock_minimo)`.as('stock_bajo'),
        ]),
    );

  const [totals, categorias] = await Promise.all([
    perProduct
      .selectFrom('live as l')
      .leftJoin('entries as e', 'e.producto_id', 'l.id')
      .select([
        sql<number>`count(*)::int`.as('total'),
        sql<number>`(count(*) filter (where l.enable))::int`.as('activos'),
        sql<number>`(count(*) filter (where not l.enable))::int`.as('inactivos'),
        sql<string>`coalesce(sum(e.stock), 0)::text`.as('stock_total'),
        sql<string>`round(coalesce(sum(e.valor), 0), 2)::text`.as('valor_total'),
        sql<number>`(count(*) filter (where e.con_stock))::int`.as('con_stock'),
        sql<number>`(count(*) filter (where e.stock_bajo))::int`.as('stock_bajo'),
      ])
      .executeTakeFirstOrThrow(),
    perProduct
      .selectFrom('live as l')
      .leftJoin('categorias as c', 'c.id', 'l.categoria_id')
      .select([sql<string>`coalesce(c.nombre, ${SIN_CATEGORIA})`.as('categoria'), sql<number>`count(*)::int`.as('cantidad')])
      .groupBy('c.nombre')
      .orderBy('cantidad', 'desc')
      .orderBy('categoria')
      .execute(),
  ]);
  return { totals, categorias };
}

/** Products of any company whose trigger-kept stock values differ from their active entries. */
export async function productsWithStaleDerivedValues(db: Kysely<InventoryDb>) {
  return db
    .selectFrom('productos as p')
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('inventarios as i')
          .innerJoin('bodegas as b', 'b.id', 'i.bodega_id')
          .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
          .where('b.activo', '=', true)
          .where('s.activo', '=', true)
          .groupBy('i.producto_id')
          .select([
            'i.producto_id',
            sql<string>`sum(i.stock)`.as('stock'),
            sql<number>`(count(*) filter (where i.stock > 0))::int`.as('con_stock'),
            sql<number>`(count(*) filter (where i.stock <= i.stock_minimo))::int`.as('stock_bajo'),
          ])
          .as('e'),
      (join) => join.onRef('e.producto_id', '=', 'p.id'),
    )
    .where(
      sql<boolean>`(p.stock_activo, p.bodegas_con_stock, p.bodegas_stock_bajo)
        is distinct from (coalesce(e.stock, 0), coalesce(e.con_stock, 0), coalesce(e.stock_bajo, 0))`,
    )
    .select(['p.id', 'p.stock_activo', 'p.bodegas_con_stock', 'p.bodegas_stock_bajo', 'e.stock', 'e.con_stock', 'e.stock_bajo'])
    .execute();
}
