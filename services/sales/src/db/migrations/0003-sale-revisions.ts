import { sql, type Kysely } from 'kysely';

/**
 * What editing a sale needs. `revision_stock` counts the stock changes of a sale after its
 * creation (updates by difference, the annulment): change n is adjusted in inventory under the
 * key `venta-<id>-rev-<n>`, so a retried change never moves stock twice. `documento_emisor_id`
 * keeps the document type whose counter issued the sale's number once an update moves the sale
 * to another type: the correlative never changes, so uniqueness stays with the issuing type.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('ventas')
    .addColumn('revision_stock', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`revision_stock >= 0`),
    )
    .addColumn('documento_emisor_id', 'integer', (c) => c.references('documentos.id'))
    .execute();
  await sql`drop index ventas_documento_numero_key`.execute(db);
  await sql`create unique index ventas_documento_numero_key on ventas (coalesce(documento_emisor_id, documento_id), numero)`.execute(db);
}
