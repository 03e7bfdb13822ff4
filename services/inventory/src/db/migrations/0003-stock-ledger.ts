import { sql, type Kysely } from 'kysely';

/**
 * The stock ledger (kardex): every change of `inventarios.stock` is a row of `movimientos`
 * written in the same transaction, so stock = Σ movements per product and warehouse.
 * `reservas` and `ajustes` make each keyed operation idempotent: the row for a key is what a
 * redelivered request finds instead of moving stock again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('movimientos')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('producto_id', 'integer', (c) => c.notNull().references('productos.id'))
    .addColumn('bodega_id', 'integer', (c) => c.notNull().references('bodegas.id'))
    .addColumn('tipo', 'text', (c) => c.notNull().check(sql`tipo in ('inventario_inicial', 'reserva', 'liberacion', 'ajuste')`))
    .addColumn('cantidad', 'numeric(18, 3)', (c) => c.notNull())
    .addColumn('stock_resultante', 'numeric(18, 3)', (c) => c.notNull())
    .addColumn('origen', 'text', (c) => c.notNull())
    .addColumn('clave', 'text')
    .addColumn('concepto', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index movimientos_kardex_idx on movimientos (empresa_id, producto_id, bodega_id, id)`.execute(db);
  await sql`create index movimientos_clave_idx on movimientos (empresa_id, clave) where clave is not null`.execute(db);

  await db.schema
    .createTable('reservas')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('clave', 'text', (c) => c.notNull())
    .addColumn('origen', 'text', (c) => c.notNull())
    .addColumn('bodega_id', 'integer', (c) => c.references('bodegas.id'))
    .addColumn('estado', 'text', (c) => c.notNull().check(sql`estado in ('reservada', 'confirmada', 'liberada')`))
    // [{id_producto, cantidad, mueve_stock}] as asked, quantities as exact decimal strings.
    .addColumn('lineas', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    // When the sweeper next asks the origin about a reservation still `reservada`.
    .addColumn('revisar_en', 'timestamptz', (c) => c.notNull())
    .addColumn('revisiones', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('released_at', 'timestamptz')
    .addUniqueConstraint('reservas_empresa_clave_key', ['empresa_id', 'clave'])
    .execute();
  await sql`create index reservas_pendientes_idx on reservas (revisar_en) where estado = 'reservada'`.execute(db);

  await db.schema
    .createTable('ajustes')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('clave', 'text', (c) => c.notNull())
    .addColumn('origen', 'text', (c) => c.notNull())
    .addColumn('concepto', 'text')
    // The movements it made, answered as they were to a redelivered request.
    .addColumn('movimientos', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('ajustes_empresa_clave_key', ['empresa_id', 'clave'])
    .execute();

  // Stock loaded before the ledger existed becomes its opening movement.
  await sql`
    insert into movimientos (empresa_id, producto_id, bodega_id, tipo, cantidad, stock_resultante, origen, concepto, created_at)
    select empresa_id, producto_id, bodega_id, 'inventario_inicial', stock, stock, 'inventario', 'Inventario inicial', created_at
    from inventarios where stock <> 0 order by id`.execute(db);
}
