import { sql, type Kysely } from 'kysely';

/**
 * A product's `updated_at` and change stamp (`cambio_xid`) move with every change of its stock
 * entries too, so `GET /inventory` filters (`updated_since`), orders (`order_by=updated_at`) and
 * answers one and the same timestamp: when the product or any of its stock last changed. A
 * partner moving its watermark to the newest `updated_at` it has read then moves forward.
 *
 * The stock trigger already updates the products of the entries a statement changes, under the
 * product locks every stock writer takes first (see 0006): it now stamps them too, whatever
 * changed (a stock entry's note or maximum as well), and takes no lock it did not take before.
 * Entries of inactive places are not part of a product's answer and do not stamp it; counting them
 * in or out (`inventarios_contar`) does.
 *
 * No index on `productos (empresa_id, cambio_xid)`: the stamp changes with every stock move, so
 * the product row's update could never be HOT and would add an entry to every index of
 * `productos`; a company's feed sorts its products' stamps without one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function inventario_aplicar(cambios inventario_cambio[]) returns void
    language plpgsql set search_path from current as $$
    begin
      perform 1
         from bodegas b join sucursales s on s.id = b.sucursal_id
        where b.id in (select c.bodega_id from unnest(cambios) c)
        order by b.id
          for share;
      update productos p set
        stock_activo = p.stock_activo + d.stock,
        bodegas_con_stock = p.bodegas_con_stock + d.con_stock,
        bodegas_stock_bajo = p.bodegas_stock_bajo + d.stock_bajo,
        updated_at = now()
      from (
        select c.producto_id,
               sum(c.signo * c.stock) as stock,
               sum(c.signo * (c.stock > 0)::int)::int as con_stock,
               sum(c.signo * (c.stock <= c.stock_minimo)::int)::int as stock_bajo
          from unnest(cambios) c
         group by c.producto_id
      ) d
      where p.id = d.producto_id;
    end $$`.execute(db);

  // Products whose stock changed after them are stamped by this migration: their position in the
  // feed moves past every cursor issued before it (a product may come once more, none is skipped).
  await sql`
    update productos p set updated_at = greatest(p.updated_at, e.updated_at)
      from (
        select producto_id, max(cambio_xid) as cambio_xid, max(updated_at) filter (where contado) as updated_at
          from inventarios
         group by producto_id
      ) e
     where e.producto_id = p.id and e.cambio_xid > p.cambio_xid`.execute(db);
}
