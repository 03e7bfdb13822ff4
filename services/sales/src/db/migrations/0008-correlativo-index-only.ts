import { sql, type Kysely } from 'kysely';

/**
 * `GET /sales?order_by=correlativo` picks a page's ids from the index of its order. The index of
 * 0002 holds the prefix as an expression, and the planner only scans an index without the table
 * when every column the query names is in it: deep pages read the whole table and sorted it
 * (page 5,000 of 600,000 sales: 800 ms). With `correlativo` included the same walk stays inside
 * the index (65 ms), as the orderings by total and created_at already do.
 *
 * Built in the migration's transaction (the migrator runs each one in its own, which CREATE INDEX
 * CONCURRENTLY refuses): writes to ventas wait while it builds, bounded by the migration's
 * lock timeout for taking the lock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index ventas_empresa_correlativo_cubre_idx
        on ventas (empresa_id, left(correlativo, length(correlativo) - length(numero::text)), numero, id)
           include (correlativo)`.execute(db);
  await sql`drop index ventas_empresa_correlativo_idx`.execute(db);
}
