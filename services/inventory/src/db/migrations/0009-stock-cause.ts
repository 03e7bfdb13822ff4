import { sql, type Kysely } from 'kysely';

/**
 * The cause of a reservation or an adjustment (`CausaStock`: the sale, return or platform it was
 * made for), kept with its key so that releasing, confirming or reverting it later names the same
 * cause in `stock.changed`. Operations recorded before know none (`{}`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['reservas', 'ajustes']) {
    await db.schema
      .alterTable(table)
      .addColumn('causa', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .execute();
  }
}
