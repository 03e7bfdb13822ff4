import { sql, type Kysely } from 'kysely';

/**
 * Returns and what they are numbered with. A return's document type is a series of this schema
 * (per company, name and prefix; "Nota de crédito" NC- unless the request names another): sales
 * document types keep their own counters for sales, so returns never consume a sale's number.
 * Money is `numeric(18,2)`, quantities `numeric(18,3)` (as stock), prices and costs
 * `numeric(18,4)` (as the sale lines they come from).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('documentos')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('prefijo', 'text', (c) => c.notNull().defaultTo(''))
    // The next number to issue: taken and incremented under the row lock in the return's transaction.
    .addColumn('correlativo', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(1)
        .check(sql`correlativo >= 1`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('documentos_empresa_nombre_prefijo_key', ['empresa_id', 'nombre', 'prefijo'])
    .execute();

  await db.schema
    .createTable('devoluciones')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    // The sale of the sales service it returns, and the warehouse that sale took its stock from.
    .addColumn('venta_id', 'integer', (c) => c.notNull())
    .addColumn('bodega_id', 'integer', (c) => c.notNull())
    .addColumn('documento_id', 'integer', (c) => c.notNull().references('documentos.id'))
    .addColumn('numero', 'integer', (c) => c.notNull())
    .addColumn('correlativo', 'text', (c) => c.notNull())
    .addColumn('fecha', 'date', (c) => c.notNull())
    .addColumn('tipo', 'text', (c) => c.notNull().check(sql`tipo in ('devolucion', 'descuento_ajuste', 'anulacion_factura')`))
    // Idempotency key of the back-office request that created it.
    .addColumn('referencia', 'text')
    .addColumn('observaciones', 'text')
    .addColumn('sub_total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('iva', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('descuento', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('exenta', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('no_sujeta', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('cuenta_a_terceros', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('iva_retenido', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('enable', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('anulada_at', 'timestamptz')
    .addColumn('usuario_id', 'integer')
    // Names as they were when the return was made (reads never ask other services).
    .addColumn('nombre_usuario', 'text', (c) => c.notNull())
    .addColumn('nombre_cliente', 'text', (c) => c.notNull())
    .addColumn('nombre_documento', 'text', (c) => c.notNull())
    // Inventory adjustment key of the stock put back (null when the return moves none); the
    // annulment's reversal is keyed `devolucion-<id>-anulacion`. Each is set once applied.
    .addColumn('clave_stock', 'text')
    .addColumn('stock_aplicado_at', 'timestamptz')
    .addColumn('stock_revertido_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('devoluciones_total_check', sql`total = sub_total + iva`)
    .execute();
  await sql`create unique index devoluciones_empresa_referencia_key on devoluciones (empresa_id, referencia) where referencia is not null`.execute(
    db,
  );
  await sql`create unique index devoluciones_documento_numero_key on devoluciones (documento_id, numero)`.execute(db);
  await sql`create unique index devoluciones_clave_stock_key on devoluciones (clave_stock) where clave_stock is not null`.execute(db);
  // The default order of GET /returns (and its date filters), company first, id as the tie-breaker.
  await sql`create index devoluciones_empresa_fecha_idx on devoluciones (empresa_id, fecha, id)`.execute(db);
  // Returns of one sale: the id_venta filter and what was already returned per line.
  await sql`create index devoluciones_empresa_venta_idx on devoluciones (empresa_id, venta_id, id)`.execute(db);

  await db.schema
    .createTable('devolucion_detalles')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('devolucion_id', 'integer', (c) => c.notNull().references('devoluciones.id').onDelete('cascade'))
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('linea', 'integer', (c) => c.notNull())
    // The sale line (of the sales service) this line returns part of.
    .addColumn('venta_detalle_id', 'integer', (c) => c.notNull())
    .addColumn('id_producto', 'integer', (c) => c.notNull())
    .addColumn('codigo_producto', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('nombre_producto', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('marca_producto', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('descripcion', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('medida', 'text', (c) => c.notNull())
    .addColumn('mueve_stock', 'boolean', (c) => c.notNull())
    .addColumn('cantidad', 'numeric(18, 3)', (c) => c.notNull().check(sql`cantidad > 0`))
    .addColumn('precio', 'numeric(18, 4)', (c) => c.notNull())
    .addColumn('costo', 'numeric(18, 4)', (c) => c.notNull().defaultTo(0))
    .addColumn('descuento', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('porcentaje_impuesto', 'numeric(7, 4)', (c) => c.notNull())
    .addColumn('sub_total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('iva', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('total', 'numeric(18, 2)', (c) => c.notNull())
    .addColumn('exenta', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('no_sujeta', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('cuenta_a_terceros', 'numeric(18, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('devolucion_detalles_total_check', sql`total = sub_total + iva`)
    .execute();
  await sql`create index devolucion_detalles_devolucion_idx on devolucion_detalles (devolucion_id, linea)`.execute(db);
}
