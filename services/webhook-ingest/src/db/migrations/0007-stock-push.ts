import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A product whose stock in an integration's warehouse changed and is owed to the shop: marked by
  // the stock events (`pendiente_desde`, the first change not pushed yet), taken by one replica at
  // a time under a lease, cleared once the shop took the value read after the taking.
  await db.schema
    .createTable('stock_push')
    .addColumn('integracion_id', 'integer', (c) => c.notNull().references('integraciones.id'))
    .addColumn('producto_id', 'integer', (c) => c.notNull())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('codigo', 'text', (c) => c.notNull())
    .addColumn('pendiente_desde', 'timestamptz')
    .addColumn('cambios', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tomado_desde', 'timestamptz')
    .addColumn('dueno', 'text')
    .addColumn('vence_at', 'timestamptz')
    .addColumn('proximo_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('intentos', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('enviado', 'integer')
    .addColumn('enviado_at', 'timestamptz')
    .addPrimaryKeyConstraint('stock_push_pk', ['integracion_id', 'producto_id'])
    .execute();
  await db.schema
    .createIndex('stock_push_pendientes_idx')
    .on('stock_push')
    .columns(['proximo_at', 'pendiente_desde'])
    .where(sql.ref('pendiente_desde'), 'is not', null)
    .execute();
  // How the shop names each of our products (by SKU = our `codigo`): its product or variation id
  // (WooCommerce, with the parent of a variation) or inventory item GID (Shopify); null when the
  // shop has no such SKU. `leido`: the quantity last read from or written to the shop (Shopify's
  // compare-and-set starts from it).
  await db.schema
    .createTable('tienda_productos')
    .addColumn('integracion_id', 'integer', (c) => c.notNull().references('integraciones.id'))
    .addColumn('codigo', 'text', (c) => c.notNull())
    .addColumn('id_externo', 'text')
    .addColumn('id_padre', 'text')
    .addColumn('leido', 'integer')
    .addColumn('revisado_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('tienda_productos_pk', ['integracion_id', 'codigo'])
    .execute();
  // One row per push that the shop took: its lag (first change → written) and writes, for the
  // percentiles of `GET /integrations`; kept a day.
  await db.schema
    .createTable('stock_envios')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('integracion_id', 'integer', (c) => c.notNull())
    .addColumn('enviado_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('lag_ms', 'integer', (c) => c.notNull())
    .addColumn('productos', 'integer', (c) => c.notNull())
    .addColumn('cambios', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('stock_envios_integracion_idx').on('stock_envios').columns(['integracion_id', 'enviado_at']).execute();
}
