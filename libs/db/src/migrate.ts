import { Migrator, sql, type Kysely, type Migration, type MigrationResultSet } from 'kysely';

export type Migrations = Record<string, Migration>;

/**
 * Migrates one service's schema: creates it, then applies that service's migrations with the
 * migration tables inside the same schema, so services never touch each other's history.
 * Each migration runs in its own transaction with `search_path` set to the schema, so plain
 * names (in the schema builder and in raw SQL alike) create and alter that schema's objects.
 */
export async function migrateSchema(db: Kysely<unknown>, schema: string, migrations: Migrations): Promise<MigrationResultSet> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  const migrator = new Migrator({
    db,
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          Object.entries(migrations).map(([name, migration]) => [
            name,
            {
              up: async (trx: Kysely<unknown>) => {
                await sql`set local search_path to ${sql.id(schema)}, public`.execute(trx);
                await migration.up(trx);
              },
            },
          ]),
        ),
    },
    migrationTableSchema: schema,
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    throw new Error(`Migration of schema ${schema} failed${failed ? ` at ${failed.migrationName}` : ''}`, { cause: result.error });
  }
  return result;
}
