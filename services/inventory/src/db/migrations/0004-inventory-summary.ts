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
  await sql`
    create function resumen_sumar(p_empresa integer, p_productos integer, p_activos integer, p_con_stock integer,
                                  p_stock_bajo integer, p_stock numeric, p_valor numeric) returns void
    language sql set search_path from current as $$
      insert into resumen_inventario as r (empresa_id, ranura, productos, activos, con_stock, stock_bajo, stock_total, valor_total)
      values (p_empresa, (txid_current() % 16)::smallint, p_productos, p_activos, p_con_stock, p_stock_bajo, p_stock, p_valor)
      on conflict (empresa_id, ranura) do update set
        productos = r.productos + excluded.productos,
        activos = r.activos + excluded.activos,
        con_stock = r.con_stock + excluded.con_stock,
        stock_bajo = r.stock_bajo + excluded.stock_bajo,
        stock_total = r.stock_total + excluded.stock_total,
        valor_total = r.valor_total + excluded.valor_total
    $$`.execute(db);
  await sql`
    create function resumen_sumar_categoria(p_empresa integer, p_categoria integer, p_productos integer) returns void
    language sql set search_path from current as $$
      insert into resumen_categorias as r (empresa_id, categoria_id, ranura, productos)
      values (p_empresa, coalesce(p_categoria, 0), (txid_current() % 16)::smallint, p_productos)
      on conflict (empresa_id, categoria_id, ranura) do update set productos = r.productos + excluded.productos
    $$`.execute(db);

  // A live product adds 1 to its company's products (and to activos when enabled), its active
  // stock and stock × costo_promedio, and 1 to con_stock / stock_bajo when any active entry is so.
  await sql`
    create function productos_resumen() returns trigger
    language plpgsql set search_path from current as $$
    declare
      antes boolean := tg_op <> 'INSERT' and old.deleted_at is null;
      ahora boolean := tg_op <> 'DELETE' and new.deleted_at is null;
    begin
      if antes and ahora and old.empresa_id = new.empresa_id then
        perform resumen_sumar(new.empresa_id, 0,
          new.enable::int - old.enable::int,
          (new.bodegas_con_stock > 0)::int - (old.bodegas_con_stock > 0)::int,
          (new.bodegas_stock_bajo > 0)::int - (old.bodegas_stock_bajo > 0)::int,
          new.stock_activo - old.stock_activo,
          new.stock_activo * new.costo_promedio - old.stock_activo * old.costo_promedio);
        if old.categoria_id is distinct from new.categoria_id then
          perform resumen_sumar_categoria(old.empresa_id, old.categoria_id, -1);
          perform resumen_sumar_categoria(new.empresa_id, new.categoria_id, 1);
        end if;
        return null;
      end if;
      if antes then
        perform resumen_sumar(old.empresa_id, -1, -(old.enable::int), -((old.bodegas_con_stock > 0)::int),
          -((old.bodegas_stock_bajo > 0)::int), -old.stock_activo, -(old.stock_activo * old.costo_promedio));
        perform resumen_sumar_categoria(old.empresa_id, old.categoria_id, -1);
      end if;
      if ahora then
        perform resumen_sumar(new.empresa_id, 1, new.enable::int, (new.bodegas_con_stock > 0)::int,
          (new.bodegas_stock_bajo > 0)::int, new.stock_activo, new.stock_activo * new.costo_promedio);
        perform resumen_sumar_categoria(new.empresa_id, new.categoria_id, 1);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger productos_resumen after insert or delete on productos for each row execute function productos_resumen()`.execute(db);
  // Renames, prices and timestamps do not change the summary: skip the call entirely.
  await sql`
    create trigger productos_resumen_cambio after update on productos for each row
    when ((old.empresa_id, old.deleted_at is null, old.enable, old.categoria_id, old.costo_promedio,
           old.stock_activo, old.bodegas_con_stock > 0, old.bodegas_stock_bajo > 0)
          is distinct from
          (new.empresa_id, new.deleted_at is null, new.enable, new.categoria_id, new.costo_promedio,
           new.stock_activo, new.bodegas_con_stock > 0, new.bodegas_stock_bajo > 0))
    execute function productos_resumen()`.execute(db);

  // Adds (signo 1) or removes (signo -1) one stock entry from its product when its warehouse and
  // branch are active. The product row is locked before the places are read, and the places are
  // read for share: an activation in progress is waited for and then seen.
  await sql`
    create function inventario_mover(p_producto integer, p_bodega integer, p_stock numeric, p_minimo numeric, p_signo integer) returns void
    language plpgsql set search_path from current as $$
    declare
      activa boolean;
    begin
      perform 1 from productos where id = p_producto for no key update;
      select b.activo and s.activo into activa
        from bodegas b join sucursales s on s.id = b.sucursal_id
       where b.id = p_bodega
         for share;
      if activa then
        update productos set
          stock_activo = stock_activo + p_signo * p_stock,
          bodegas_con_stock = bodegas_con_stock + p_signo * (p_stock > 0)::int,
          bodegas_stock_bajo = bodegas_stock_bajo + p_signo * (p_stock <= p_minimo)::int
        where id = p_producto;
      end if;
    end $$`.execute(db);
  await sql`
    create function inventarios_resumen() returns trigger
    language plpgsql set search_path from current as $$
    declare
      activa boolean;
    begin
      if tg_op = 'UPDATE' and old.producto_id = new.producto_id and old.bodega_id = new.bodega_id then
        perform 1 from productos where id = new.producto_id for no key update;
        select b.activo and s.activo into activa
          from bodegas b join sucursales s on s.id = b.sucursal_id
         where b.id = new.bodega_id
           for share;
        if activa then
          update productos set
            stock_activo = stock_activo + (new.stock - old.stock),
            bodegas_con_stock = bodegas_con_stock + (new.stock > 0)::int - (old.stock > 0)::int,
            bodegas_stock_bajo = bodegas_stock_bajo + (new.stock <= new.stock_minimo)::int - (old.stock <= old.stock_minimo)::int
          where id = new.producto_id;
        end if;
        return null;
      end if;
      if tg_op in ('UPDATE', 'DELETE') then
        perform inventario_mover(old.producto_id, old.bodega_id, old.stock, old.stock_minimo, -1);
      end if;
      if tg_op in ('UPDATE', 'INSERT') then
        perform inventario_mover(new.producto_id, new.bodega_id, new.stock, new.stock_minimo, 1);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger inventarios_resumen after insert or delete on inventarios for each row execute function inventarios_resumen()`.execute(db);
  await sql`
    create trigger inventarios_resumen_cambio after update on inventarios for each row
    when ((old.producto_id, old.bodega_id, old.stock, old.stock_minimo) is distinct from (new.producto_id, new.bodega_id, new.stock, new.stock_minimo))
    execute function inventarios_resumen()`.execute(db);

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
  // triggers off. Takes productos exclusively for its duration (the counters are rebuilt, not moved).
  await sql`
    create function resumen_reconstruir() returns void
    language plpgsql set search_path from current as $$
    begin
      alter table productos disable trigger productos_resumen_cambio;
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
      alter table productos enable trigger productos_resumen_cambio;

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
