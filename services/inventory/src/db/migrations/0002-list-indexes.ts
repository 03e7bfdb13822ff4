import { sql, type Kysely } from 'kysely';

/**
 * Indexes of `GET /inventory` at 100,000 products × 5 warehouses per company beside other
 * companies: one B-tree per ordering (company first, `id` as the tie-breaker the queries use),
 * and trigram indexes so the partial-match filters (`ILIKE '%…%'`) need no sequential scan.
 * The extension lives in `public`, shared by every schema of the database.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm with schema public`.execute(db);

  for (const column of ['nombre', 'codigo', 'precio', 'costo', 'created_at']) {
    await sql`create index ${sql.id(`productos_empresa_${column}_idx`)} on productos (empresa_id, ${sql.id(column)}, id) where deleted_at is null`.execute(
      db,
    );
  }
  for (const column of ['nombre', 'codigo', 'marca']) {
    await sql`create index ${sql.id(`productos_${column}_trgm_idx`)} on productos using gin (${sql.id(column)} gin_trgm_ops) where deleted_at is null`.execute(
      db,
    );
  }
  await sql`create index categorias_nombre_trgm_idx on categorias using gin (nombre gin_trgm_ops)`.execute(db);
  // The stock filters look up a product's entries by product id: the unique (producto_id, bodega_id) serves them.
  await sql`create index productos_empresa_categoria_idx on productos (empresa_id, categoria_id) where deleted_at is null`.execute(db);
}
