import { existsSync } from 'node:fs';
// By its source path, not '@erp/runtime': jest's global setup loads this file with Node's own
// resolver, which would take the runtime's build (absent before `npm run build`) and all of it.
import { missingDependencies, type DependencyUrls } from '../../runtime/src/dependencies';

export interface Infra {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  /** Stops what this process started (testcontainers); nothing for services found running. */
  stop(): Promise<void>;
}

const DEFAULTS: DependencyUrls = {
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
  natsUrl: 'nats://127.0.0.1:4222',
  redisUrl: 'redis://127.0.0.1:6379',
};

/** The services' URLs, each from its env variable or the local default port. */
export function configuredUrls(env: NodeJS.ProcessEnv = process.env): DependencyUrls {
  return {
    databaseUrl: env.DATABASE_URL ?? DEFAULTS.databaseUrl,
    natsUrl: env.NATS_URL ?? DEFAULTS.natsUrl,
    redisUrl: env.REDIS_URL ?? DEFAULTS.redisUrl,
  };
}

function dockerAvailable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

/**
 * Finds Postgres, NATS (JetStream) and Redis: env URLs, else the local default ports, else
 * containers when a Docker engine is there, else an error that says what to start.
 */
export async function resolveInfra(): Promise<Infra> {
  const urls = configuredUrls();
  const missing = await missingDependencies(urls);
  if (missing.length === 0) return { ...urls, stop: async () => undefined };
  if (!dockerAvailable()) {
    throw new Error(`Tests need Postgres, NATS and Redis.\n${missing.join('\n')}\n(or run a Docker engine and leave the URLs unset).`);
  }
  return startContainers();
}

async function startContainers(): Promise<Infra> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const [pg, nats, redis] = await Promise.all([
    new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start(),
    new GenericContainer('nats:2.11-alpine')
      .withCommand(['-js'])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start(),
    new GenericContainer('redis:7-alpine')
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start(),
  ]);
  return {
    databaseUrl: `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`,
    natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    stop: async () => {
      await Promise.all([pg.stop(), nats.stop(), redis.stop()]);
    },
  };
}
