import { Migrator, sql, type Kysely, type Migration, type MigrationResultSet } from 'kysely';

export type Migrations = Record<string, Migration>;

export interface MigrateOptions {
  /**
   * `statement_timeout` of each migration, in ms (0: none). A migration is not an API request:
   * building an index on a large table may take minutes, so it does not inherit the pool's 30 s.
   */
  statementTimeoutMs?: number;
  /**
   * `lock_timeout` of each migration, in ms (0: none). While a migration waits for a lock every
   * query behind it waits too; failing fast (the Job retries) keeps the API serving.
   */
  lockTimeoutMs?: number;
}

/**
 * Migrations this code does not know but the schema has applied: a newer release ran them. Under
 * the expand/contract rule (a migration only adds what older code can ignore; removals come a
 * release after the code stopped using them) the older code runs on that schema, so they stand as
 * no-ops: Kysely would otherwise fail the first upgrade after a rollback on a history it does not know.
 */
async function appliedByNewerReleases(db: Kysely<unknown>, schema: string, known: Migrations): Promise<string[]> {
  const history = `${schema}.kysely_migration`;
  const { rows: found } = await sql<{
    exists: boolean;
  }>`select to_regclass(${sql.lit(`"${schema}".kysely_migration`)}) is not null as exists`.execute(db);
  if (!found[0]?.exists) return [];
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(history)} order by name`.execute(db);
  return rows.map((r) => r.name).filter((name) => !(name in known));
}

/**
 * Migrates one service's schema: creates it, then applies that service's migrations with the
 * migration tables inside the same schema, so services never touch each other's history.
 * Each migration runs in its own transaction with `search_path` set to the schema, so plain
 * names (in the schema builder and in raw SQL alike) create and alter that schema's objects.
 */
export async function migrateSchema(
  db: Kysely<unknown>,
  schema: string,
  migrations: Migrations,
  options: MigrateOptions = {},
): Promise<MigrationResultSet & { ahead: string[] }> {
  // A schema provisioned for its owner role exists already, and that role may not create schemas.
  const { rows: existing } = await sql<{
    found: boolean;
  }>`select exists (select 1 from pg_namespace where nspname = ${schema}) as found`.execute(db);
  if (!existing[0]?.found) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  const ahead = await appliedByNewerReleases(db, schema, migrations);
  const noop: Migration = { up: async () => undefined };
  const migrator = new Migrator({
    db,
    provider: {
      getMigrations: async () => ({
        ...Object.fromEntries(ahead.map((name) => [name, noop])),
        ...Object.fromEntries(
          Object.entries(migrations).map(([name, migration]) => [
            name,
            {
              up: async (trx: Kysely<unknown>) => {
                await sql`set local search_path to ${sql.id(schema)}, public`.execute(trx);
                await sql`select set_config('statement_timeout', ${String(options.statementTimeoutMs ?? 0)}, true)`.execute(trx);
                await sql`select set_config('lock_timeout', ${String(options.lockTimeoutMs ?? 0)}, true)`.execute(trx);
                await migration.up(trx);
              },
            },
          ]),
        ),
      }),
    },
    migrationTableSchema: schema,
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    throw new Error(`Migration of schema ${schema} failed${failed ? ` at ${failed.migrationName}` : ''}`, { cause: result.error });
  }
  return { ...result, ahead };
}
