import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The shop's Admin API: its URL in clear, its credentials and our webhook path sealed together
  // (AES-256-GCM, `domain/credentials.ts`); the stock settings of the stock push.
  await db.schema
    .alterTable('integraciones')
    .addColumn('tienda_url', 'text')
    .addColumn('tienda_credenciales', 'bytea')
    .addColumn('tienda_ubicacion', 'text')
    .addColumn('stock_colchon', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`stock_colchon >= 0`),
    )
    .addColumn('sincronizar_stock', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  // Which path brought a delivery: the platform's webhook or a reconciliation pass.
  await db.schema
    .alterTable('entregas')
    .addColumn('origen', 'text', (c) =>
      c
        .notNull()
        .defaultTo('webhook')
        .check(sql`origen in ('webhook', 'conciliacion')`),
    )
    .execute();
  // Which path brought an order first (null: before this was recorded), and through which integration.
  await db.schema
    .alterTable('pedidos')
    .addColumn('origen', 'text', (c) => c.check(sql`origen in ('webhook', 'conciliacion')`))
    .addColumn('integracion_id', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('pedidos_integracion_created_idx').on('pedidos').columns(['integracion_id', 'created_at']).execute();

  // One row per integration with a shop API: the reconciliation's watermark, its lease (one
  // replica at a time; a lapsed lease passes to another) and what the last pass found.
  await db.schema
    .createTable('conciliaciones')
    .addColumn('integracion_id', 'integer', (c) => c.primaryKey().references('integraciones.id'))
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('marca', 'timestamptz')
    .addColumn('proxima_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('dueno', 'text')
    .addColumn('vence_at', 'timestamptz')
    .addColumn('ultima_at', 'timestamptz')
    .addColumn('correcta_at', 'timestamptz')
    .addColumn('resultado', 'text', (c) => c.check(sql`resultado in ('correcta', 'fallida')`))
    .addColumn('error', 'text')
    .addColumn('fallos_seguidos', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pedidos_leidos', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pedidos_recuperados', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('suscripcion', 'text', (c) => c.notNull().defaultTo('desconocida'))
    .addColumn('restauraciones', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('conciliaciones_proxima_idx').on('conciliaciones').column('proxima_at').execute();
}
