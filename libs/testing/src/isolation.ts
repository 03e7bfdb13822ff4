import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { configuredUrls } from './infra';

export interface Isolation {
  /** A database of its own, created empty for this test file. */
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  /** NATS subject prefix of this run: its own subjects and its own JetStream stream. */
  subjectPrefix: string;
  /** Redis key prefix of this run. */
  redisKeyPrefix: string;
  /** Drops the database (connections of stopped services must be closed first). */
  drop(): Promise<void>;
}

/**
 * Isolates one test file: its own database, subject prefix and Redis key prefix, so files can
 * run in parallel and two runs on one machine never see each other's data or messages.
 */
export async function isolate(label = 't'): Promise<Isolation> {
  const urls = configuredUrls();
  const id = `${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 12)}_${randomBytes(5).toString('hex')}`;
  const dbName = `erp_test_${id}`;
  const admin = new pg.Client({ connectionString: urls.databaseUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${dbName}"`);
  } finally {
    await admin.end();
  }
  const databaseUrl = new URL(urls.databaseUrl);
  databaseUrl.pathname = `/${dbName}`;
  return {
    databaseUrl: databaseUrl.toString(),
    natsUrl: urls.natsUrl,
    redisUrl: urls.redisUrl,
    subjectPrefix: `test_${id}`,
    redisKeyPrefix: `test:${id}`,
    drop: async () => {
      const client = new pg.Client({ connectionString: urls.databaseUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists "${dbName}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * The environment of one service started in-process on an isolation: its database, subject and
 * Redis key prefixes, ops on a free port, quiet logs unless LOG_LEVEL says otherwise; `extra`
 * adds or overrides.
 */
export function serviceEnv(iso: Isolation, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: iso.databaseUrl,
    NATS_URL: iso.natsUrl,
    REDIS_URL: iso.redisUrl,
    SUBJECT_PREFIX: iso.subjectPrefix,
    REDIS_KEY_PREFIX: iso.redisKeyPrefix,
    OPS_PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    SHUTDOWN_TIMEOUT_MS: '10000',
    ...extra,
  };
}
