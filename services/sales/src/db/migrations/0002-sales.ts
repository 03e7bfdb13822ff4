import { sql, type Kysely } from 'kysely';

/**
 * Sales and what they are issued with: document types (with the counter their correlatives
 * come from), channels, customers, the sales and their lines. Money is `numeric(18,2)`,
 * quantities `numeric(18,4)`; the sale document is a JSON snapshot taken when the sale is issued.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('documentos')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    // Branch of the inventory service, checked through it when the document type is seeded.
    .addColumn('sucursal_id', 'integer', (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('prefijo', 'text', (c) => c.notNull().defaultTo(''))
    // The next number to issue: taken and incremented under the row lock in the sale's transaction.
    .addColumn('correlativo', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(1)
        .check(sql`correlativo >= 0`),
    )
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('solo_cotizacion', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index documentos_empresa_idx on documentos (empresa_id, id)`.execute(db);

  await db.schema
    .createTable('canales')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index canales_empresa_idx on canales (empresa_id, id)`.execute(db);

  await db.schema
    .createTable('clientes')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    // 0 means no limit.
    .addColumn('limite_credito', 'numeric(18, 2)', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`limite_credito >= 0`),
    )
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index clientes_empresa_idx on clientes (empresa_id, id)`.execute(db);

  await db.schema
    .createTable('ventas')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('sucursal_id', 'integer', (c) => c.notNull())
    .addColumn('bodega_id', 'integer', (c) => c.notNull())
    .addColumn('documento_id', 'integer', (c) => c.notNull().references('documentos.id'))
    .addColumn('canal_id', 'integer', (c) => c.references('canales.id'))
    .addColumn('cliente_id', 'integer', (c) => c.references('clientes.id'))
    // The acting user of the gateway's directory (key's user or the company's first active admin).
    .addColumn('usuario_id', 'integer')
    .addColumn('fecha', 'date', (c) => c.notNull())
    .addColumn('correlativo', 'text', (c) => c.notNull())
    .addColumn('numero', 'integer', (c) => c.notNull())
    .addColumn('referencia_externa', 'text')
    .addColumn('estado', 'text', (c) => c.notNull().check(sql`estado in ('Completada', 'Pendiente', 'Anulada', 'Cotizacion')`))
    .addColumn('cotizacion', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('origen', 'text', (c) => c.notNull().defaultTo('api'))
    .addColumn('forma_pago', 'text')
    .addColumn('observaciones', 'text')
    .addColumn('monto_pago', 'numeric(18, 2)')
    .addColumn('cambio', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('fecha_expiracion', 'date')
    .addColumn('sub_total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('iva', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('descuento', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('exenta', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('saldo', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    // Names as they were when the sale was issued (the lists never ask other services).
    .addColumn('nombre_cliente', 'text')
    .addColumn('nombre_usuario', 'text')
    .addColumn('nombre_vendedor', 'text')
    .addColumn('nombre_documento', 'text', (c) => c.notNull())
    // The sale document as issued: never updated.
    .addColumn('documento', 'jsonb', (c) => c.notNull())
    .addColumn('documento_fiscal_emitido', 'boolean', (c) => c.notNull().defaultTo(false))
    // Key of the stock reservation taken for the sale (null when it took no stock).
    .addColumn('clave_reserva', 'text')
    // Set once the stock of an annulled sale is back.
    .addColumn('stock_devuelto_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('ventas_total_check', sql`total = sub_total + iva`)
    .execute();
  // Idempotency of POST /sales: one sale per reference and company, decided by the index.
  await sql`create unique index ventas_empresa_referencia_key on ventas (empresa_id, referencia_externa) where referencia_externa is not null`.execute(
    db,
  );
  // Correlatives are unique per document type even if the counter were ever set back by hand.
  await sql`create unique index ventas_documento_numero_key on ventas (documento_id, numero)`.execute(db);
  await sql`create unique index ventas_clave_reserva_key on ventas (empresa_id, clave_reserva) where clave_reserva is not null`.execute(db);
  // One index per ordering of GET /sales, company first and id as the tie-breaker; state-filtered lists and the summary.
  for (const column of ['fecha', 'total', 'created_at']) {
    await sql`create index ${sql.id(`ventas_empresa_${column}_idx`)} on ventas (empresa_id, ${sql.id(column)}, id)`.execute(db);
  }
  // Correlatives order by prefix, then by number ("FAC-9" before "FAC-10").
  await sql`create index ventas_empresa_correlativo_idx on ventas (empresa_id, left(correlativo, length(correlativo) - length(numero::text)), numero, id)`.execute(
    db,
  );
  await sql`create index ventas_empresa_estado_fecha_idx on ventas (empresa_id, estado, fecha, id)`.execute(db);
  await sql`create index ventas_cliente_pendiente_idx on ventas (cliente_id) where estado = 'Pendiente'`.execute(db);

  await db.schema
    .createTable('venta_detalles')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('venta_id', 'integer', (c) => c.notNull().references('ventas.id').onDelete('cascade'))
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('linea', 'integer', (c) => c.notNull())
    .addColumn('id_producto', 'integer', (c) => c.notNull())
    .addColumn('codigo', 'text')
    .addColumn('nombre_producto', 'text')
    .addColumn('descripcion', 'text')
    // Services never move stock.
    .addColumn('mueve_stock', 'boolean', (c) => c.notNull())
    .addColumn('id_presentacion', 'integer')
    .addColumn('cantidad', 'numeric(18, 4)', (c) => c.notNull())
    .addColumn('precio', 'numeric(18, 4)', (c) => c.notNull())
    .addColumn('descuento', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('porcentaje_impuesto', 'numeric(7, 4)', (c) => c.notNull())
    .addColumn('sub_total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('iva', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('exenta', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('costo', 'numeric(18, 4)', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('venta_detalles_total_check', sql`total = sub_total + iva`)
    .execute();
  await sql`create index venta_detalles_venta_idx on venta_detalles (venta_id, linea)`.execute(db);
}
