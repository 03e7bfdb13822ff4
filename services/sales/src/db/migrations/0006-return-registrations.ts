import { sql, type Kysely } from 'kysely';

/**
 * Returns registered with their sale before they commit (`sales.sale.return.register`). A
 * registration counts in `devoluciones_activas` from the moment it is made, under the sale's row
 * lock, so an annulment or an update that follows waits for it and sees it. It is `registrada`
 * until the return's event (or a check with the returns service) confirms it, or `descartada`
 * when the returns service answers that its return never committed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('devoluciones_registradas')
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('clave', 'text', (c) => c.notNull())
    .addColumn('venta_id', 'integer', (c) => c.notNull().references('ventas.id'))
    .addColumn('estado', 'text', (c) =>
      c
        .notNull()
        .defaultTo('registrada')
        .check(sql`estado in ('registrada', 'confirmada', 'descartada')`),
    )
    .addColumn('id_devolucion', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('devoluciones_registradas_pkey', ['empresa_id', 'clave'])
    .execute();
  await sql`create index devoluciones_registradas_pendientes on devoluciones_registradas (venta_id) where estado = 'registrada'`.execute(
    db,
  );
}
