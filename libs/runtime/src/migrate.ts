import { z } from 'zod';
import { Bus, provisionJetStream } from '@erp/bus';
import { SERVICES } from '@erp/contracts';
import { createDb, migrateSchema, type Migrations } from '@erp/db';
import { BaseConfig, loadConfig, natsConnection } from './config';
import { createLogger, type AppLogger } from './logger';

export const MigrateConfig = BaseConfig.extend({
  /** Per migration statement; 0 = none (the Job's activeDeadlineSeconds still bounds the whole run). */
  MIGRATION_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(0),
  /** Wait for a lock before giving up (the Job retries) rather than queue the API's queries behind it. */
  MIGRATION_LOCK_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Also create or update the events stream and every service's durable consumers, connected to
   * NATS as NATS_USER (the operator identity in production: services may not manage JetStream).
   * The chart turns it on in the first migration Job only; local runs leave it on.
   */
  MIGRATE_STREAMS: z.enum(['true', 'false']).default('true'),
});
export type MigrateConfig = z.output<typeof MigrateConfig>;

/** Entry point of a service's migration Job: migrates its schema, logs each step, exits 0 or 1. */
export function runMigrations(schema: string, migrations: Migrations): void {
  const config = loadConfig(MigrateConfig);
  const logger = createLogger(`${schema}-migrate`, config.LOG_LEVEL);
  // The client waits as long as a migration's statements may run (no limit unless MIGRATION_STATEMENT_TIMEOUT_MS says).
  const db = createDb<unknown>({
    connectionString: config.DATABASE_URL,
    max: 1,
    applicationName: `${schema}-migrate`,
    statementTimeoutMs: config.MIGRATION_STATEMENT_TIMEOUT_MS,
  });
  migrateSchema(db, schema, migrations, {
    statementTimeoutMs: config.MIGRATION_STATEMENT_TIMEOUT_MS,
    lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT_MS,
  })
    .then(async (result) => {
      if (result.ahead.length > 0)
        logger.warn({ schema, ahead: result.ahead }, 'schema has migrations of a newer release; kept as they are');
      for (const r of result.results ?? []) logger.info({ migration: r.migrationName, status: r.status }, 'migration');
      logger.info({ schema, applied: result.results?.length ?? 0 }, 'schema up to date');
      if (config.MIGRATE_STREAMS === 'true') await provisionStreams(config, logger);
      await db.destroy();
      process.exit(0);
    })
    .catch(async (err: unknown) => {
      logger.fatal({ err, schema }, 'migration failed');
      await db.destroy();
      process.exit(1);
    });
}

async function provisionStreams(config: MigrateConfig, logger: AppLogger): Promise<void> {
  const bus = await Bus.connect({ ...natsConnection(config), prefix: config.SUBJECT_PREFIX, name: 'migrate', logger });
  try {
    await provisionJetStream(bus, SERVICES);
    logger.info({ prefix: config.SUBJECT_PREFIX }, 'events stream and durable consumers up to date');
  } finally {
    await bus.drain();
  }
}
