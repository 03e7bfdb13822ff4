import { sql, type Kysely } from 'kysely';

/**
 * Delta sync (`order_by=updated_at` with a cursor), as for sales: a return is stamped with the id
 * of the transaction that wrote it, on creation and on every change a partner can see (one that
 * moves `updated_at`; the stock bookkeeping marks do not).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table devoluciones add column cambio_xid xid8 not null default pg_current_xact_id()`.execute(db);
  await sql`
    create function devoluciones_marcar_cambio() returns trigger language plpgsql as $$
    begin
      new.cambio_xid := pg_current_xact_id();
      return new;
    end $$`.execute(db);
  await sql`
    create trigger devoluciones_cambio before update on devoluciones for each row
    when (old.updated_at is distinct from new.updated_at) execute function devoluciones_marcar_cambio()`.execute(db);
  await sql`create index devoluciones_empresa_cambio_idx on devoluciones (empresa_id, cambio_xid, id)`.execute(db);
}
