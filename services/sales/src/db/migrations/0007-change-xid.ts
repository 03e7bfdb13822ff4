import { sql, type Kysely } from 'kysely';

/**
 * Delta sync (`order_by=updated_at` with a cursor): every insert and update of a sale stamps it
 * with the id of the transaction that wrote it. Transaction ids only grow, and a reader that
 * answers only rows older than every transaction still running (`pg_snapshot_xmin`) sees each
 * change in commit-safe order: a later commit can never land behind a position already read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ventas add column cambio_xid xid8 not null default pg_current_xact_id()`.execute(db);
  await sql`
    create function ventas_marcar_cambio() returns trigger language plpgsql as $$
    begin
      new.cambio_xid := pg_current_xact_id();
      return new;
    end $$`.execute(db);
  await sql`create trigger ventas_cambio before update on ventas for each row execute function ventas_marcar_cambio()`.execute(db);
  await sql`create index ventas_empresa_cambio_idx on ventas (empresa_id, cambio_xid, id)`.execute(db);
}
