// Global setup is loaded by Node, outside the test resolver: import the source path.
import { resolveInfra } from '../libs/testing/src/infra';

/** Finds (or starts) Postgres, NATS and Redis once per run and hands their URLs to the workers. */
export default async function globalSetup(): Promise<void> {
  const infra = await resolveInfra();
  process.env.DATABASE_URL = infra.databaseUrl;
  process.env.NATS_URL = infra.natsUrl;
  process.env.REDIS_URL = infra.redisUrl;
  (globalThis as { __ERP_INFRA__?: typeof infra }).__ERP_INFRA__ = infra;
}
