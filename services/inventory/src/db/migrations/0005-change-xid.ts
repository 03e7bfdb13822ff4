import { sql, type Kysely } from 'kysely';

/**
 * Delta sync of `GET /inventory` (`order_by=updated_at` with a cursor), as for sales: products and
 * their stock entries are stamped with the id of the transaction that wrote them, and a product's
 * position is the newest stamp of the product and its entries. The stamp is set on the row being
 * written, so stock moves take no lock they did not take before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function marcar_cambio() returns trigger language plpgsql as $$
    begin
      new.cambio_xid := pg_current_xact_id();
      return new;
    end $$`.execute(db);
  for (const table of ['productos', 'inventarios']) {
    await sql`alter table ${sql.table(table)} add column cambio_xid xid8 not null default pg_current_xact_id()`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_cambio`)} before update on ${sql.table(table)} for each row execute function marcar_cambio()`.execute(
      db,
    );
  }
  await sql`create index inventarios_producto_cambio_idx on inventarios (producto_id, cambio_xid)`.execute(db);
}
