import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The service product (a `Servicio`) that shipping, fees and adjustments of orders are sold as;
  // null: the company's `ENVIO`, created on first use.
  await db.schema.alterTable('integraciones').addColumn('producto_envio_id', 'integer').execute();
  // The platform's line ids in the order of the sale's lines (refunds name lines by them), and the
  // refunds already booked as returns.
  await db.schema
    .alterTable('pedidos')
    .addColumn('lineas', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('reembolsos', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .execute();
}
