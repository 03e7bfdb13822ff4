import { jetstreamManager } from '@nats-io/jetstream';
import { createOutboxTables } from '@erp/bus';
import { streamName } from '@erp/contracts';
import { sql, type Migrations } from '@erp/db';
import { harness, type Harness } from '@erp/testing';
import { BaseConfig, loadConfig, type RunningService, type ServiceContext } from '../src';

const migrations: Migrations = { '0001': { up: (db) => createOutboxTables(db) } };

describe('service lifecycle', () => {
  let h: Harness<unknown>;

  const start = (setup: (ctx: ServiceContext<BaseConfig>) => Promise<void> = async () => undefined, env: Record<string, string> = {}) =>
    h.start((serviceEnv) => ({ name: 'packages', schema: 'lifecycle', migrations, config: loadConfig(BaseConfig, serviceEnv), setup }), {
      env: { DB_POOL_MAX: '2', ...env },
    });
  const ops = async (service: RunningService<BaseConfig>, path: string) => {
    const res = await fetch(`http://127.0.0.1:${service.opsPort}${path}`);
    return { status: res.status, text: await res.text() };
  };
  const readyz = async (service: RunningService<BaseConfig>) => {
    const { status, text } = await ops(service, '/readyz');
    return { http: status, ...(JSON.parse(text) as { status: string; checks: Record<string, string> }) };
  };
  const opsClosed = async (service: RunningService<BaseConfig>) =>
    fetch(`http://127.0.0.1:${service.opsPort}/healthz`).then(
      () => false,
      () => true,
    );

  beforeAll(async () => {
    h = await harness('lifecycle');
  });
  afterAll(() => h?.close());

  it('runs the setup with the schema migrated, NATS connected and the events stream in place', async () => {
    const seen: Record<string, unknown> = {};
    const service = await start(async (ctx) => {
      seen.outbox = (await sql<{ n: number }>`select count(*)::int as n from lifecycle.outbox`.execute(ctx.db)).rows[0]!.n;
      seen.connected = ctx.bus.isConnected();
      seen.stream = (await (await jetstreamManager(ctx.bus.nc)).streams.info(streamName(h.iso.subjectPrefix))).config.name;
    });
    expect(seen).toEqual({ outbox: 0, connected: true, stream: streamName(h.iso.subjectPrefix) });
    await service.stop();
  });

  it('has its subscriptions known to the server when it has started: a request from another connection finds it at once', async () => {
    const subject = `${h.iso.subjectPrefix}.lifecycle.ping`;
    for (let i = 0; i < 10; i++) {
      const service = await start(async (ctx) => {
        ctx.bus.nc.subscribe(subject, { callback: (_err, msg) => void msg.respond('pong') });
      });
      const answer = await h.bus.nc.request(subject, '', { timeout: 2_000 });
      expect(answer.string()).toBe('pong');
      await service.stop();
    }
  });

  it('answers /healthz, /metrics with the outbox backlog of its schema, and 404 elsewhere', async () => {
    const service = await start();
    expect(await ops(service, '/healthz')).toEqual({ status: 200, text: '{"status":"ok"}' });
    const metrics = await ops(service, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^erp_outbox_pending_events\{service="packages"\} 0$/m);
    expect((await ops(service, '/otra')).status).toBe(404);
    await service.stop();
  });

  it('is ready only while every required check passes; an optional check that fails only reports degraded', async () => {
    const failing = new Set<string>();
    const check = (name: string) => async () => {
      if (failing.has(name)) throw new Error('sin conexión');
      return 'ok';
    };
    const service = await start(async (ctx) => {
      ctx.addReadinessCheck('redis', check('redis'));
      ctx.addReadinessCheck('exportador', check('exportador'), { required: false });
    });
    expect(await readyz(service)).toEqual({
      http: 200,
      status: 'ready',
      checks: { postgres: 'ok', nats: 'ok', redis: 'ok', exportador: 'ok' },
    });
    failing.add('exportador');
    expect(await readyz(service)).toMatchObject({ http: 200, status: 'ready', checks: { exportador: 'degraded: sin conexión' } });
    failing.add('redis');
    expect(await readyz(service)).toEqual({
      http: 503,
      status: 'not ready',
      checks: { postgres: 'ok', nats: 'ok', redis: 'down: sin conexión', exportador: 'degraded: sin conexión' },
    });
    await service.stop();
  });

  it('counts a check that does not answer in 2 s as down', async () => {
    const service = await start(async (ctx) => {
      ctx.addReadinessCheck('lento', () => new Promise((resolve) => setTimeout(() => resolve('tarde'), 5_000).unref()));
    });
    const began = Date.now();
    expect(await readyz(service)).toMatchObject({ http: 503, checks: { postgres: 'ok', lento: 'down: timeout' } });
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - began).toBeLessThan(4_000);
    await service.stop();
  });

  it('stops newest step first, goes on past a failing step, closes NATS and Postgres, and answers /readyz 503 until the very end', async () => {
    const log: string[] = [];
    let service!: RunningService<BaseConfig>;
    const step =
      (name: string, fail = false) =>
      async () => {
        const { http, checks } = await readyz(service);
        log.push(`${name} ${http} ${checks.shutdown}`);
        if (fail) throw new Error(`${name} failed`);
      };
    service = await start(async (ctx) => {
      ctx.onShutdown('consumers', step('consumers'));
      ctx.onShutdown('http', step('http', true));
    });
    service.ctx.onShutdown('late', step('late'));

    expect(await service.stop()).toBe(true);
    expect(log).toEqual(['late 503 in progress', 'http 503 in progress', 'consumers 503 in progress']);
    expect(service.ctx.bus.isConnected()).toBe(false);
    await expect(sql`select 1`.execute(service.ctx.db)).rejects.toThrow();
    expect(await opsClosed(service)).toBe(true);
  });

  it('stops its workers after the steps of what takes work in, newest first, and before NATS closes', async () => {
    const log: string[] = [];
    let service!: RunningService<BaseConfig>;
    const worker = (name: string) => ({ stop: async () => void log.push(`${name} ${service.ctx.bus.isConnected()}`) });
    service = await start(async (ctx) => {
      ctx.addWorker('sweeper', worker('sweeper'));
      ctx.onShutdown('http', async () => void log.push('http'));
      ctx.addWorker('dispatcher', worker('dispatcher'));
    });

    expect(await service.stop()).toBe(true);
    expect(log).toEqual(['http', 'dispatcher true', 'sweeper true']);
    expect(service.ctx.bus.isConnected()).toBe(false);
  });

  it('resolves false when the steps outlast SHUTDOWN_TIMEOUT_MS, and still finishes them; a second stop is the same stop', async () => {
    const service = await start(async () => undefined, { SHUTDOWN_TIMEOUT_MS: '200' });
    service.ctx.onShutdown('slow', () => new Promise((resolve) => setTimeout(resolve, 1_500)));
    const began = Date.now();
    const stopping = service.stop();
    expect(service.stop()).toBe(stopping);
    expect(await stopping).toBe(false);
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(await opsClosed(service)).toBe(false);
    const deadline = Date.now() + 5_000;
    while (!(await opsClosed(service)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await opsClosed(service)).toBe(true);
    expect(service.ctx.bus.isConnected()).toBe(false);
  });
});
