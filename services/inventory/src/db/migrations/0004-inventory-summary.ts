import { sql, type Kysely } from 'kysely';

/**
 * `GET /inventory/summary` reads counters kept exact by triggers in the transaction of every
 * change, instead of folding every stock row of the company per request.
 *
 * Two levels, each fed by the one below:
 * - per product (`productos.stock_activo`, `bodegas_con_stock`, `bodegas_stock_bajo`): its stock
 *   entries in active warehouses of active branches, kept by the trigger on `inventarios` and by
 *   the triggers that move a warehouse's or a branch's entries in or out when it is (de)activated;
 * - per company (`resumen_inventario`, `resumen_categorias`): the contribution of each live
 *   product, kept by the trigger on `productos` from its old and new row, so a stock change, a
 *   cost change, a category change, enabling and soft-deleting all go through one rule.
 *
 * A company's counters are split over 16 rows (`ranura`), summed on read. A transaction always
 * writes the row of its own ranura (its transaction id modulo 16), so concurrent sales of a
 * company rarely wait on each other, and a transaction holds at most one counter row per company:
 * with the product rows locked first (lowest id first, see `lockStock`), no lock cycle can form.
 *
 * Lock order of every writer: branches and warehouses (shared), then products (by id), then
 * stock entries (by product, warehouse), then its counter row. Activation takes its branch or
 * warehouse row exclusively, so it waits for the stock writers of that place and they wait for it:
 * an entry is moved in or out exactly once, either by the activation or by the writer after it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table productos
      add column stock_activo numeric not null default 0,
      add column bodegas_con_stock integer not null default 0,
      add column bodegas_stock_bajo integer not null default 0`.execute(db);

  await sql`
    create table resumen_inventario (
      empresa_id integer not null,
      ranura smallint not null,
      productos integer not null default 0,
      activos integer not null default 0,
      con_stock integer not null default 0,
      stock_bajo integer not null default 0,
      stock_total numeric not null default 0,
      valor_total numeric not null default 0,
      primary key (empresa_id, ranura)
    )`.execute(db);
  // categoria_id 0 stands for "no category" (identity ids start at 1).
  await sql`
    create table resumen_categorias (
      empresa_id integer not null,
      categoria_id integer not null,
      ranura smallint not null,
      productos integer not null default 0,
      primary key (empresa_id, categoria_id, ranura)
    )`.execute(db);

  // Functions keep the migration's search_path (this schema, then public) whoever calls them.
  // The triggers are per statement over its transition tables, so a statement that changes many
  // rows (an activation, a rebuild, a bulk fix) updates each product once and each counter row
  // once, instead of once per row.

  // A live product adds 1 to its company's products (and to activos when enabled) and to its
  // category, its active stock and stock × costo_promedio, and 1 to con_stock / stock_bajo when
  // any active entry is so. A statement's old rows are taken out and its new rows put in.
  await sql`
    create type producto_aporte as (
      empresa_id integer, categoria_id integer, signo integer, activo boolean,
      stock numeric, valor numeric, con_stock boolean, stock_bajo boolean
    )`.execute(db);
  await sql`
    create function productos_resumen() returns trigger
    language plpgsql set search_path from current as $$
    declare
      aportes producto_aporte[] := '{}';
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        aportes := array(
          select row(empresa_id, categoria_id, -1, enable, stock_activo, stock_activo * costo_promedio,
                     bodegas_con_stock > 0, bodegas_stock_bajo > 0)::producto_aporte
            from antiguas where deleted_at is null);
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        aportes := aportes || array(
          select row(empresa_id, categoria_id, 1, enable, stock_activo, stock_activo * costo_promedio,
                     bodegas_con_stock > 0, bodegas_stock_bajo > 0)::producto_aporte
            from nuevas where deleted_at is null);
      end if;
      if cardinality(aportes) = 0 then
        return null;
      end if;
      insert into resumen_inventario as r (empresa_id, ranura, productos, activos, con_stock, stock_bajo, stock_total, valor_total)
      select empresa_id, (txid_current() % 16)::smallint, sum(signo), sum(signo * activo::int), sum(signo * con_stock::int),
             sum(signo * stock_bajo::int), sum(signo * stock), sum(signo * valor)
        from unnest(aportes)
       group by empresa_id
      having (sum(signo), sum(signo * activo::int), sum(signo * con_stock::int), sum(signo * stock_bajo::int), sum(signo * stock), sum(signo * valor))
             <> (0, 0, 0, 0, 0, 0)
      on conflict (empresa_id, ranura) do update set
        productos = r.productos + excluded.productos,
        activos = r.activos + excluded.activos,
        con_stock = r.con_stock + excluded.con_stock,
        stock_bajo = r.stock_bajo + excluded.stock_bajo,
        stock_total = r.stock_total + excluded.stock_total,
        valor_total = r.valor_total + excluded.valor_total;
      insert into resumen_categorias as r (empresa_id, categoria_id, ranura, productos)
      select empresa_id, coalesce(categoria_id, 0), (txid_current() % 16)::smallint, sum(signo)
        from unnest(aportes)
       group by empresa_id, coalesce(categoria_id, 0)
      having sum(signo) <> 0
      on conflict (empresa_id, categoria_id, ranura) do update set productos = r.productos + excluded.productos;
      return null;
    end $$`.execute(db);
  await sql`create trigger productos_resumen_insert after insert on productos referencing new table as nuevas for each statement execute function productos_resumen()`.execute(
    db,
  );
  await sql`create trigger productos_resumen_update after update on productos referencing old table as antiguas new table as nuevas for each statement execute function productos_resumen()`.execute(
    db,
  );
  await sql`create trigger productos_resumen_delete after delete on productos referencing old table as antiguas for each statement execute function productos_resumen()`.execute(
    db,
  );

  // Stock entries taken out (signo -1) of or put in (signo 1) their products, for those whose
  // warehouse and branch are active. The places are locked for share first: an activation in
  // progress is waited for and then seen, and none can start before this transaction ends, so a
  // product gets an entry's change exactly when the activation did not (or will not) move it.
  await sql`create type inventario_cambio as (producto_id integer, bodega_id integer, stock numeric, stock_minimo numeric, signo integer)`.execute(
    db,
  );
  await sql`
    create function inventario_aplicar(cambios inventario_cambio[]) returns void
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
        bodegas_stock_bajo = p.bodegas_stock_bajo + d.stock_bajo
      from (
        select c.producto_id,
               sum(c.signo * c.stock) as stock,
               sum(c.signo * (c.stock > 0)::int)::int as con_stock,
               sum(c.signo * (c.stock <= c.stock_minimo)::int)::int as stock_bajo
          from unnest(cambios) c
          join bodegas b on b.id = c.bodega_id
          join sucursales s on s.id = b.sucursal_id
         where b.activo and s.activo
         group by c.producto_id
      ) d
      where p.id = d.producto_id
        and (d.stock, d.con_stock, d.stock_bajo) <> (0, 0, 0);
    end $$`.execute(db);
  await sql`
    create function inventarios_resumen() returns trigger
    language plpgsql set search_path from current as $$
    declare
      cambios inventario_cambio[] := '{}';
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        cambios := array(select row(producto_id, bodega_id, stock, stock_minimo, -1)::inventario_cambio from antiguas);
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        cambios := cambios || array(select row(producto_id, bodega_id, stock, stock_minimo, 1)::inventario_cambio from nuevas);
      end if;
      if cardinality(cambios) > 0 then
        perform inventario_aplicar(cambios);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger inventarios_resumen_insert after insert on inventarios referencing new table as nuevas for each statement execute function inventarios_resumen()`.execute(
    db,
  );
  await sql`create trigger inventarios_resumen_update after update on inventarios referencing old table as antiguas new table as nuevas for each statement execute function inventarios_resumen()`.execute(
    db,
  );
  await sql`create trigger inventarios_resumen_delete after delete on inventarios referencing old table as antiguas for each statement execute function inventarios_resumen()`.execute(
    db,
  );

  // Moves every entry of the warehouses in or out of their products (signo 1 or -1), products
  // locked by id first. Entries of these warehouses cannot change meanwhile: their writers hold
  // or wait for a share lock on the warehouse row the caller holds exclusively (or its branch).
  await sql`
    create function bodegas_mover(p_bodegas integer[], p_signo integer) returns void
    language plpgsql set search_path from current as $$
    begin
      perform 1 from productos
       where id in (select producto_id from inventarios where bodega_id = any(p_bodegas))
       order by id
         for no key update;
      update productos p set
        stock_activo = p.stock_activo + p_signo * e.stock,
        bodegas_con_stock = p.bodegas_con_stock + p_signo * e.con_stock,
        bodegas_stock_bajo = p.bodegas_stock_bajo + p_signo * e.stock_bajo
      from (
        select producto_id, sum(stock) as stock,
               (count(*) filter (where stock > 0))::int as con_stock,
               (count(*) filter (where stock <= stock_minimo))::int as stock_bajo
          from inventarios
         where bodega_id = any(p_bodegas)
         group by producto_id
      ) e
      where p.id = e.producto_id;
    end $$`.execute(db);
  await sql`
    create function bodegas_activacion() returns trigger
    language plpgsql set search_path from current as $$
    declare
      antes boolean;
      ahora boolean;
    begin
      select old.activo and s.activo into antes from sucursales s where s.id = old.sucursal_id for share;
      select new.activo and s.activo into ahora from sucursales s where s.id = new.sucursal_id for share;
      if antes is distinct from ahora then
        perform bodegas_mover(array[new.id], case when ahora then 1 else -1 end);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger bodegas_activacion after update on bodegas for each row
    when ((old.activo, old.sucursal_id) is distinct from (new.activo, new.sucursal_id))
    execute function bodegas_activacion()`.execute(db);
  await sql`
    create function sucursales_activacion() returns trigger
    language plpgsql set search_path from current as $$
    declare
      activas integer[];
    begin
      select coalesce(array_agg(id order by id), '{}') into activas
        from (select id, activo from bodegas where sucursal_id = new.id order by id for share) b
       where activo;
      perform bodegas_mover(activas, case when new.activo then 1 else -1 end);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger sucursales_activacion after update on sucursales for each row
    when (old.activo is distinct from new.activo)
    execute function sucursales_activacion()`.execute(db);

  // Builds both levels from the rows in one pass: the backfill here and after a bulk load with the
  // triggers off. The counters are rebuilt from the products afterwards, whatever the update moved.
  await sql`
    create function resumen_reconstruir() returns void
    language plpgsql set search_path from current as $$
    begin
      update productos p set
        stock_activo = x.stock_activo,
        bodegas_con_stock = x.bodegas_con_stock,
        bodegas_stock_bajo = x.bodegas_stock_bajo
      from (
        select q.id, coalesce(e.stock, 0) as stock_activo, coalesce(e.con_stock, 0) as bodegas_con_stock, coalesce(e.stock_bajo, 0) as bodegas_stock_bajo
          from productos q
          left join (
            select i.producto_id, sum(i.stock) as stock,
                   (count(*) filter (where i.stock > 0))::int as con_stock,
                   (count(*) filter (where i.stock <= i.stock_minimo))::int as stock_bajo
              from inventarios i
              join bodegas b on b.id = i.bodega_id
              join sucursales s on s.id = b.sucursal_id
             where b.activo and s.activo
             group by i.producto_id
          ) e on e.producto_id = q.id
      ) x
      where x.id = p.id
        and (p.stock_activo, p.bodegas_con_stock, p.bodegas_stock_bajo) is distinct from (x.stock_activo, x.bodegas_con_stock, x.bodegas_stock_bajo);

      delete from resumen_inventario;
      insert into resumen_inventario (empresa_id, ranura, productos, activos, con_stock, stock_bajo, stock_total, valor_total)
      select empresa_id, 0, count(*), count(*) filter (where enable), count(*) filter (where bodegas_con_stock > 0),
             count(*) filter (where bodegas_stock_bajo > 0), sum(stock_activo), sum(stock_activo * costo_promedio)
        from productos
       where deleted_at is null
       group by empresa_id;
      delete from resumen_categorias;
      insert into resumen_categorias (empresa_id, categoria_id, ranura, productos)
      select empresa_id, coalesce(categoria_id, 0), 0, count(*)
        from productos
       where deleted_at is null
       group by empresa_id, coalesce(categoria_id, 0);
    end $$`.execute(db);
  await sql`select resumen_reconstruir()`.execute(db);
}
