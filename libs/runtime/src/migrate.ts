import { createDb, migrateSchema, type Migrations } from '@erp/db';
import { BaseConfig, loadConfig } from './config';
import { createLogger } from './logger';

/** Entry point of a service's migration Job: migrates its schema, logs each step, exits 0 or 1. */
export function runMigrations(schema: string, migrations: Migrations): void {
  const config = loadConfig(BaseConfig);
  const logger = createLogger(`${schema}-migrate`, config.LOG_LEVEL);
  const db = createDb<unknown>({ connectionString: config.DATABASE_URL, max: 1, applicationName: `${schema}-migrate` });
  migrateSchema(db, schema, migrations)
    .then(async (result) => {
      for (const r of result.results ?? []) logger.info({ migration: r.migrationName, status: r.status }, 'migration');
      logger.info({ schema, applied: result.results?.length ?? 0 }, 'schema up to date');
      await db.destroy();
      process.exit(0);
    })
    .catch(async (err: unknown) => {
      logger.fatal({ err, schema }, 'migration failed');
      await db.destroy();
      process.exit(1);
    });
}
