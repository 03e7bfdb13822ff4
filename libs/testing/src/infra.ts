import { existsSync } from 'node:fs';
import net from 'node:net';

export interface Infra {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  /** Stops what this process started (testcontainers); nothing for services found running. */
  stop(): Promise<void>;
}

const DEFAULTS = {
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
  natsUrl: 'nats://127.0.0.1:4222',
  redisUrl: 'redis://127.0.0.1:6379',
};

const HOW_TO_START: Record<keyof typeof DEFAULTS, string> = {
  databaseUrl: 'Postgres: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start (or set DATABASE_URL)',
  natsUrl: 'NATS with JetStream: nats-server -js -a 127.0.0.1 -p 4222 (or set NATS_URL)',
  redisUrl: 'Redis: redis-server --port 6379 --save "" --appendonly no (or set REDIS_URL)',
};

/** Whether something accepts TCP connections at the URL's host and port. */
export async function reachable(url: string, timeoutMs = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const defaultPort = url.startsWith('postgres') ? 5432 : url.startsWith('nats') ? 4222 : 6379;
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The services' URLs, each from its env variable or the local default port. */
export function configuredUrls(env: NodeJS.ProcessEnv = process.env): typeof DEFAULTS {
  return {
    databaseUrl: env.DATABASE_URL ?? DEFAULTS.databaseUrl,
    natsUrl: env.NATS_URL ?? DEFAULTS.natsUrl,
    redisUrl: env.REDIS_URL ?? DEFAULTS.redisUrl,
  };
}

/** Lines naming each unreachable dependency and how to start it; empty when all answer. */
export async function missingInfra(urls: typeof DEFAULTS): Promise<string[]> {
  const keys = Object.keys(urls) as Array<keyof typeof DEFAULTS>;
  const up = await Promise.all(keys.map((k) => reachable(urls[k])));
  return keys.filter((_, i) => !up[i]).map((k) => `${urls[k]} is unreachable. Start ${HOW_TO_START[k]}`);
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
  const missing = await missingInfra(urls);
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
    new GenericContainer('nats:2.11-alpine').withCommand(['-js']).withExposedPorts(4222).withWaitStrategy(Wait.forLogMessage(/Server is ready/)).start(),
    new GenericContainer('redis:7-alpine').withExposedPorts(6379).withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/)).start(),
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
