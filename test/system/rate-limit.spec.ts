import { Redis } from 'ioredis';
import { KEY_A, KEY_B, Stack, json, twoCompanies } from '../support/stack';

const HOUR = 3_600_000;
const path = '/api/external/v1/system/rate-limit';
const dated = `${path}?fecha_inicio=2026-01-01&fecha_fin=2026-01-31`;

describe('hourly rate limit per company', () => {
  let stack: Stack;
  let redis: Redis;
  let now = Date.UTC(2026, 10, 21, 14, 20, 0);
  const windowStart = () => Math.floor(now / HOUR) * 3600;
  const keyId = async (key: string) =>
    (
      await stack.query<{ id: number }>("select empresa_id as id from gateway.api_keys where key_hash = sha256(convert_to($1, 'UTF8'))", [
        key,
      ])
    )[0]!.id;
  const counterKey = async (key: string) => `${stack.iso.redisKeyPrefix}:rl:empresa:${await keyId(key)}:${windowStart()}`;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory'], gatewayOptions: { clock: () => now } });
    await stack.seed(twoCompanies());
    redis = new Redis(stack.iso.redisUrl);
  });
  afterAll(async () => {
    await redis.quit();
    await stack.stop();
  });

  it('sends the three headers on every authenticated response, the reset being the next top of the hour', async () => {
    const res = await stack.api(path, { key: KEY_A });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 10, 21, 15) / 1000));
    const body = await json(res);
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(body.data.remaining_requests);
    expect(body.data).toMatchObject({
      requests_used: 1000 - body.data.remaining_requests,
      max_requests: 1000,
      reset_time: '2026-11-21T15:00:00.000Z',
      window_minutes: 60,
      limits: { standard: 1000, with_date_filters: 2000 },
      current_limit_type: 'standard',
      empresa_nombre: 'Empresa A',
      // A key made before scopes existed keeps every one of them, and never expires.
      alcances: ['sales:write', 'inventory:write', 'returns:write', 'packages:write', 'events:write', 'exports:write', 'keys:write'],
      expira_el: null,
    });
    const notFound = await stack.api('/api/external/v1/inventory/999999', { key: KEY_A });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('x-ratelimit-remaining')).toBe(String(body.data.remaining_requests - 1));
  });

  it('lets exactly 10 of 50 concurrent requests through when 10 remain, and does not count the refused ones', async () => {
    const key = await counterKey(KEY_A);
    await redis.set(key, '990');
    const responses = await Promise.all(Array.from({ length: 50 }, () => stack.api(path, { key: KEY_A })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
    expect(await redis.get(key)).toBe('1000');
    const refused = responses.find((r) => r.status === 429)!;
    expect(await json(refused)).toEqual({
      success: false,
      error: 'Rate limit excedido. Máximo 1000 requests por hora (2000 con filtros de fecha).',
      code: 429,
      reason: 'cuota_excedida',
    });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('retry-after')).toBe(String(40 * 60)); // 14:20 → 15:00
  });

  it('still allows requests with both date filters up to 2000, but not with only one', async () => {
    const key = await counterKey(KEY_A);
    await redis.set(key, '1500');
    const both = await stack.api(dated, { key: KEY_A });
    expect(both.status).toBe(200);
    expect(both.headers.get('x-ratelimit-limit')).toBe('2000');
    expect(both.headers.get('x-ratelimit-remaining')).toBe('499');
    expect((await json(both)).data.current_limit_type).toBe('with_date_filters');
    const one = await stack.api(`${path}?fecha_inicio=2026-01-01`, { key: KEY_A });
    expect(one.status).toBe(429);
    expect(one.headers.get('x-ratelimit-limit')).toBe('1000');
    await redis.set(key, '2000');
    expect((await stack.api(dated, { key: KEY_A })).status).toBe(429);
  });

  it('counts each key on its own', async () => {
    await redis.set(await counterKey(KEY_A), '1000');
    expect((await stack.api(path, { key: KEY_A })).status).toBe(429);
    expect((await stack.api(path, { key: KEY_B })).status).toBe(200);
  });

  it('starts a fresh window at the top of the next UTC hour, whatever the first request time was', async () => {
    await redis.set(await counterKey(KEY_A), '1000');
    now = Date.UTC(2026, 10, 21, 14, 59, 59, 900);
    expect((await stack.api(path, { key: KEY_A })).status).toBe(429);
    now = Date.UTC(2026, 10, 21, 15, 0, 0, 0);
    const res = await stack.api(path, { key: KEY_A });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('999');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 10, 21, 16) / 1000));
    expect(await redis.ttl(await counterKey(KEY_A))).toBeGreaterThan(3_600);
  });
});

describe('rate limit while Redis is unreachable', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory'],
      gateway: { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_STANDARD: '5', RATE_LIMIT_DATE_FILTERED: '10' },
    });
    await stack.seed(twoCompanies());
  });
  afterAll(() => stack.stop());

  it('keeps serving with a per-process counter under the same rule, and reports the condition', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await stack.api(path, { key: KEY_A })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);

    const ops = `http://127.0.0.1:${stack.running.get('gateway')!.opsPort}`;
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect((await json(ready)).checks.redis).toMatch(/^degraded/);
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toMatch(/erp_gateway_redis_up\{[^}]*\} 0/);
    expect(metrics).toMatch(/erp_gateway_rate_limit_fallback_total\{[^}]*\} 7/);
  });
});
