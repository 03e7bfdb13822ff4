import net from 'node:net';
import { missingDependencies, reachable } from '@erp/runtime';
import { configuredUrls, freePort, resolveInfra } from '.';

/** A TCP listener on a free loopback port. */
async function listener(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('finding Postgres, NATS and Redis for a test run', () => {
  let open: { port: number; close: () => Promise<void> };
  let closed: number;
  beforeAll(async () => {
    open = await listener();
    closed = await freePort();
  });
  afterAll(() => open.close());

  it('takes each URL from its env variable, and the local default port for the ones unset', () => {
    expect(configuredUrls({ NATS_URL: 'nats://nats.ci:4333' })).toEqual({
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
      natsUrl: 'nats://nats.ci:4333',
      redisUrl: 'redis://127.0.0.1:6379',
    });
    expect(configuredUrls({ DATABASE_URL: 'postgres://ci@db:5433/x', REDIS_URL: 'redis://cache:6380' })).toMatchObject({
      databaseUrl: 'postgres://ci@db:5433/x',
      redisUrl: 'redis://cache:6380',
    });
  });

  it('tells a port that accepts connections from one that does not', async () => {
    expect(await reachable(`nats://127.0.0.1:${open.port}`)).toBe(true);
    expect(await reachable(`nats://127.0.0.1:${closed}`)).toBe(false);
  });

  it('names each unreachable dependency and how to start it, and nothing when all answer', async () => {
    const up = `127.0.0.1:${open.port}`;
    const down = `127.0.0.1:${closed}`;
    expect(await missingDependencies({ databaseUrl: `postgres://${up}/x`, natsUrl: `nats://${up}`, redisUrl: `redis://${up}` })).toEqual(
      [],
    );
    const missing = await missingDependencies({
      databaseUrl: `postgres://${down}/x`,
      natsUrl: `nats://${up}`,
      redisUrl: `redis://${down}`,
    });
    expect(missing).toHaveLength(2);
    expect(missing[0]).toBe(
      `postgres://${down}/x is unreachable. Start Postgres: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start (or set DATABASE_URL)`,
    );
    expect(missing[1]).toMatch(new RegExp(`^redis://${down} is unreachable\\. Start Redis: .*\\(or set REDIS_URL\\)$`));
    const withPassword = await missingDependencies({
      databaseUrl: `postgres://erp:s3cret@${down}/x`,
      natsUrl: `nats://${up}`,
      redisUrl: `redis://${up}`,
    });
    expect(withPassword).toEqual([expect.stringMatching(new RegExp(`^postgres://erp:\\*\\*\\*@${down}/x is unreachable\\.`))]);
  });

  it('uses the services the env names when they answer, and has nothing to stop', async () => {
    const saved = { DATABASE_URL: process.env.DATABASE_URL, NATS_URL: process.env.NATS_URL, REDIS_URL: process.env.REDIS_URL };
    const urls = {
      DATABASE_URL: `postgres://ci@127.0.0.1:${open.port}/erp`,
      NATS_URL: `nats://127.0.0.1:${open.port}`,
      REDIS_URL: `redis://127.0.0.1:${open.port}`,
    };
    Object.assign(process.env, urls);
    try {
      const infra = await resolveInfra();
      expect(infra).toMatchObject({ databaseUrl: urls.DATABASE_URL, natsUrl: urls.NATS_URL, redisUrl: urls.REDIS_URL });
      await expect(infra.stop()).resolves.toBeUndefined();
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
