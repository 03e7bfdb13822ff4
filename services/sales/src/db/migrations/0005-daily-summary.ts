import { sql, type Kysely } from 'kysely';
import { addToDailySummarySql } from '../daily-summary';

/**
 * A daily summary of the sales per company, date, state and document type: their count and the
 * sums of total, tax and discounts. Summaries and the lists' counts read it instead of scanning
 * the sales. Triggers keep it in the writing transaction on every path (creation, update,
 * annulment, fixture loads, direct SQL).
 *
 * The document type is part of the key so that today's rows line up with the document type's row
 * lock that concurrent creations already take: two creations only meet on a summary row when they
 * already wait for each other. A row whose count falls to 0 stays (readers skip it), so a sale
 * moving back and forth does not delete and re-insert it.
 *
 * An update that moves a sale from one key to another takes both rows in key order, whatever the
 * direction of the move, so two transactions moving sales in opposite directions cannot deadlock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table ventas_resumen_diario (
      empresa_id integer not null,
      fecha date not null,
      estado text not null,
      documento_id integer not null,
      cantidad integer not null check (cantidad >= 0),
      total numeric(20, 2) not null,
      iva numeric(20, 2) not null,
      descuento numeric(20, 2) not null,
      primary key (empresa_id, fecha, estado, documento_id)
    )`.execute(db);

  // search_path is pinned to the schema being migrated: the services query with schema-qualified
  // names and leave their own search_path at its default. A sale added inserts or increments its
  // row; a sale taken away or changed decrements a row that must exist (the check constraint
  // applies to an upsert's proposed row before the conflict, so a decrement cannot be an upsert).
  await sql`
    create function ventas_resumen_diario_sumar(
      p_empresa_id integer, p_fecha date, p_estado text, p_documento_id integer,
      p_cantidad integer, p_total numeric, p_iva numeric, p_descuento numeric
    ) returns void language plpgsql set search_path from current as $$
    begin
      if p_cantidad > 0 then
        insert into ventas_resumen_diario as r (empresa_id, fecha, estado, documento_id, cantidad, total, iva, descuento)
        values (p_empresa_id, p_fecha, p_estado, p_documento_id, p_cantidad, p_total, p_iva, p_descuento)
        on conflict (empresa_id, fecha, estado, documento_id) do update
           set cantidad = r.cantidad + excluded.cantidad,
               total = r.total + excluded.total,
               iva = r.iva + excluded.iva,
               descuento = r.descuento + excluded.descuento;
      else
        update ventas_resumen_diario
           set cantidad = cantidad + p_cantidad, total = total + p_total, iva = iva + p_iva, descuento = descuento + p_descuento
         where empresa_id = p_empresa_id and fecha = p_fecha and estado = p_estado and documento_id = p_documento_id;
        if not found then
          raise exception 'ventas_resumen_diario has no row for empresa %, fecha %, estado %, documento %', p_empresa_id, p_fecha, p_estado, p_documento_id;
        end if;
      end if;
    end
    $$`.execute(db);

  await sql`
    create function ventas_resumen_diario_aplicar() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'INSERT' then
        perform ventas_resumen_diario_sumar(new.empresa_id, new.fecha, new.estado, new.documento_id, 1, new.total, new.iva, new.descuento);
      elsif tg_op = 'DELETE' then
        perform ventas_resumen_diario_sumar(old.empresa_id, old.fecha, old.estado, old.documento_id, -1, -old.total, -old.iva, -old.descuento);
      elsif (old.empresa_id, old.fecha, old.estado, old.documento_id) = (new.empresa_id, new.fecha, new.estado, new.documento_id) then
        perform ventas_resumen_diario_sumar(new.empresa_id, new.fecha, new.estado, new.documento_id, 0,
          new.total - old.total, new.iva - old.iva, new.descuento - old.descuento);
      elsif (old.empresa_id, old.fecha, old.estado, old.documento_id) < (new.empresa_id, new.fecha, new.estado, new.documento_id) then
        perform ventas_resumen_diario_sumar(old.empresa_id, old.fecha, old.estado, old.documento_id, -1, -old.total, -old.iva, -old.descuento);
        perform ventas_resumen_diario_sumar(new.empresa_id, new.fecha, new.estado, new.documento_id, 1, new.total, new.iva, new.descuento);
      else
        perform ventas_resumen_diario_sumar(new.empresa_id, new.fecha, new.estado, new.documento_id, 1, new.total, new.iva, new.descuento);
        perform ventas_resumen_diario_sumar(old.empresa_id, old.fecha, old.estado, old.documento_id, -1, -old.total, -old.iva, -old.descuento);
      end if;
      return null;
    end
    $$`.execute(db);

  await sql`
    create function ventas_resumen_diario_vaciar() returns trigger language plpgsql set search_path from current as $$
    begin
      truncate ventas_resumen_diario;
      return null;
    end
    $$`.execute(db);

  // Created before the backfill, in the same transaction: creating a trigger locks out writers of
  // ventas until the commit, so no sale is written between the backfill's snapshot and the triggers.
  await sql`create trigger ventas_resumen_diario_insert after insert on ventas for each row execute function ventas_resumen_diario_aplicar()`.execute(
    db,
  );
  await sql`
    create trigger ventas_resumen_diario_update after update of empresa_id, fecha, estado, documento_id, total, iva, descuento on ventas
    for each row
    when ((old.empresa_id, old.fecha, old.estado, old.documento_id, old.total, old.iva, old.descuento)
          is distinct from (new.empresa_id, new.fecha, new.estado, new.documento_id, new.total, new.iva, new.descuento))
    execute function ventas_resumen_diario_aplicar()`.execute(db);
  await sql`create trigger ventas_resumen_diario_delete after delete on ventas for each row execute function ventas_resumen_diario_aplicar()`.execute(
    db,
  );
  await sql`create trigger ventas_resumen_diario_truncate after truncate on ventas for each statement execute function ventas_resumen_diario_vaciar()`.execute(
    db,
  );

  await sql.raw(addToDailySummarySql()).execute(db);
}
