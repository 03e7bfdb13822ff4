import { sql, type Kysely } from 'kysely';

/**
 * (De)activating a warehouse or a branch no longer moves every stock entry of the place in or out
 * of its product inside the transaction of the change: that held a lock on every product of the
 * place until the last one was moved (~6 s for a warehouse of 100k products).
 *
 * Each entry now says whether it is counted in its product (`inventarios.contado`). The change of
 * the place commits alone; its entries are then brought to it in short transactions
 * (`inventarios_contar`, a batch at a time), each taking the same locks in the same order as
 * every stock writer: the places (shared), the batch's products by id, then the entries.
 *
 * A stock write applies an entry's change to its product when the entry is counted, whatever the
 * state of its place at that moment, so an entry is moved in or out exactly once: by the batch
 * that flips `contado`. A new entry is counted when its place is active, read under a share lock
 * on the place, so a change of the place waits for the insert and its batches then see the entry.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table inventarios add column contado boolean not null default true`.execute(db);
  // A place whose entries are still being brought to its state, so a count cut short is finished later.
  await sql`alter table sucursales add column conteo_pendiente bigint`.execute(db);
  await sql`alter table bodegas add column conteo_pendiente bigint`.execute(db);
  // Entries of inactive places were never counted; the summary trigger moves nothing for them.
  await sql`
    update inventarios i set contado = false
      from bodegas b join sucursales s on s.id = b.sucursal_id
     where b.id = i.bodega_id and not (b.activo and s.activo)`.execute(db);

  await sql`drop trigger bodegas_activacion on bodegas`.execute(db);
  await sql`drop trigger sucursales_activacion on sucursales`.execute(db);
  await sql`drop function bodegas_activacion()`.execute(db);
  await sql`drop function sucursales_activacion()`.execute(db);
  await sql`drop function bodegas_mover(integer[], integer)`.execute(db);

  await sql`
    create function inventarios_contado_inicial() returns trigger
    language plpgsql set search_path from current as $$
    begin
      select b.activo and s.activo into new.contado
        from bodegas b join sucursales s on s.id = b.sucursal_id
       where b.id = new.bodega_id
         for share;
      new.contado := coalesce(new.contado, false);
      return new;
    end $$`.execute(db);
  await sql`create trigger inventarios_contado_inicial before insert on inventarios for each row execute function inventarios_contado_inicial()`.execute(
    db,
  );

  // Only counted entries reach their product; the places stay share-locked first, as before, so
  // a change of a place waits for the stock writers of that place.
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
        bodegas_stock_bajo = p.bodegas_stock_bajo + d.stock_bajo
      from (
        select c.producto_id,
               sum(c.signo * c.stock) as stock,
               sum(c.signo * (c.stock > 0)::int)::int as con_stock,
               sum(c.signo * (c.stock <= c.stock_minimo)::int)::int as stock_bajo
          from unnest(cambios) c
         group by c.producto_id
      ) d
      where p.id = d.producto_id
        and (d.stock, d.con_stock, d.stock_bajo) <> (0, 0, 0);
    end $$`.execute(db);
  await sql`
    create or replace function inventarios_resumen() returns trigger
    language plpgsql set search_path from current as $$
    declare
      cambios inventario_cambio[] := '{}';
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        cambios := array(select row(producto_id, bodega_id, stock, stock_minimo, -1)::inventario_cambio from antiguas where contado);
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        cambios := cambios || array(select row(producto_id, bodega_id, stock, stock_minimo, 1)::inventario_cambio from nuevas where contado);
      end if;
      if cardinality(cambios) > 0 then
        perform inventario_aplicar(cambios);
      end if;
      return null;
    end $$`.execute(db);

  // One batch: the next entries (by id, after p_desde) of the warehouses, those whose contado
  // differs from their place flipped. Returns the last id looked at, null once none is left.
  await sql`
    create function inventarios_contar(p_empresa integer, p_bodegas integer[], p_desde integer, p_limite integer) returns integer
    language plpgsql set search_path from current as $$
    declare
      hasta integer;
      cambiar integer[];
    begin
      perform 1
         from bodegas b join sucursales s on s.id = b.sucursal_id
        where b.id = any(p_bodegas)
        order by b.id
          for share;
      select max(x.id), coalesce(array_agg(x.id) filter (where x.cambia), '{}') into hasta, cambiar
        from (
          select i.id, i.contado <> (b.activo and s.activo) as cambia
            from inventarios i
            join bodegas b on b.id = i.bodega_id
            join sucursales s on s.id = b.sucursal_id
           where i.empresa_id = p_empresa and i.bodega_id = any(p_bodegas) and i.id > p_desde
           order by i.id
           limit p_limite
        ) x;
      if cardinality(cambiar) > 0 then
        perform 1 from productos
         where id in (select producto_id from inventarios where id = any(cambiar))
         order by id
           for no key update;
        update inventarios i set contado = b.activo and s.activo
          from bodegas b join sucursales s on s.id = b.sucursal_id
         where i.id = any(cambiar) and b.id = i.bodega_id and i.contado <> (b.activo and s.activo);
      end if;
      return hasta;
    end $$`.execute(db);

  // The rebuild after a bulk load (triggers off) also brings every entry's contado to its place.
  await sql`
    create or replace function resumen_reconstruir() returns void
    language plpgsql set search_path from current as $$
    begin
      update inventarios i set contado = b.activo and s.activo
        from bodegas b join sucursales s on s.id = b.sucursal_id
       where b.id = i.bodega_id and i.contado <> (b.activo and s.activo);

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
             where i.contado
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
}
