import pg from 'pg';
import { API_KEY_PATTERN, SCOPES } from '@erp/contracts';
import { loadConfig, startService, type RunningService } from '@erp/runtime';
import { GatewayConfig } from '../../services/gateway/src/config';
import { gatewayService } from '../../services/gateway/src/service';
import { apiRoutes } from '../../services/gateway/src/http/routes';
import { openApiPath } from '../../services/gateway/src/openapi/openapi';
import { generateApiKey } from '../../services/gateway/src/domain/api-key';
import { eventually } from '@erp/testing';
import { TestReceiver } from '../../services/subscriptions/test/receiver';
import { KEY_A, KEY_B, Stack, json, msUntilStatus, stackEnv, twoCompanies } from '../support/stack';

const API = '/api/external/v1';

interface Listed {
  id: number;
  nombre: string;
  alcances: string[];
  expira_el: string | null;
  ultimo_uso: string | null;
  ultima_direccion: string | null;
}
type Answer = { data: any; reason?: string; error?: string; details: Record<string, string[]> }; // eslint-disable-line @typescript-eslint/no-explicit-any
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('API keys a company manages: scopes, rotation, expiry, revocation', () => {
  let stack: Stack;
  /** A second gateway replica on the same database, bus and Redis. */
  let second: RunningService<GatewayConfig>;
  let secondUrl = '';
  const settings = {
    AUTH_CACHE_TTL_MS: '600000',
    AUTH_NEGATIVE_CACHE_TTL_MS: '600000',
    API_KEY_USAGE_FLUSH_MS: '200',
    API_KEY_EXPIRY_SWEEP_MS: '200',
  };
  let receiver: TestReceiver;
  /** The partner events `api_key.*` company A's receiver got, in arrival order. */
  const keyEvents = () => receiver.delivered().filter((e) => e.type.startsWith('api_key.'));

  const call = async (method: string, path: string, key: string, body?: unknown, base?: string) => {
    const init = {
      key,
      method,
      ...(body !== undefined ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {}),
    };
    const res = base
      ? await fetch(`${base}${API}${path}`, {
          method,
          headers: { Authorization: `Bearer ${key}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        })
      : await stack.api(`${API}${path}`, init);
    return { status: res.status, headers: res.headers, body: (await json(res)) as Answer };
  };
  const create = async (key: string, nombre: string, alcances: string[], extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/api-keys', key, { nombre, alcances, ...extra });
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    return res.body.data as { id: number; key: string; alcances: string[]; prefijo: string; expira_el: string | null };
  };

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'subscriptions', 'exports', 'packages', 'returns'],
      subscriptions: { EVENTS_POLL_MS: '100' },
      gateway: settings,
    });
    await stack.seed(twoCompanies());
    const subscribed = await call('POST', '/event-subscriptions', KEY_A, {
      url: receiver.url,
      events: ['api_key.expiring', 'api_key.rotated', 'api_key.revoked'],
    });
    expect(subscribed.status).toBe(201);
    second = await startService(
      gatewayService(loadConfig(GatewayConfig, stackEnv(stack.iso, settings)), {
        onListening: (port) => {
          secondUrl = `http://127.0.0.1:${port}`;
        },
      }),
      { migrateOnStart: false },
    );
  });
  afterAll(async () => {
    await second?.stop();
    await stack.stop();
    await receiver?.stop();
  });

  it('refuses a read-only key every write with 403 naming the scope it needs, and lets its reads through', async () => {
    const reader = await create(
      KEY_A,
      'BI (solo lectura)',
      SCOPES.filter((s) => s.endsWith(':read')),
    );
    expect(reader.key).toMatch(API_KEY_PATTERN);
    const writes = apiRoutes({ standard: 1, withDateFilters: 1 }).filter((r) => r.method !== 'get');
    expect(writes.length).toBeGreaterThan(10);
    for (const route of writes) {
      const path = openApiPath(route.path).replace(/\{[^}]+\}/g, '1');
      const res = await call(route.method.toUpperCase(), path, reader.key, route.method === 'delete' ? undefined : {});
      expect([route.method, route.path, res.status, res.body.reason, res.headers.get('x-accepted-scopes')]).toEqual([
        route.method,
        route.path,
        403,
        'alcance_insuficiente',
        route.scope,
      ]);
      expect(res.body.details.alcance![0]).toContain(route.scope);
    }
    // Nothing was made by the refused writes.
    expect(await stack.query('select count(*)::int as n from sales.ventas')).toEqual([{ n: 0 }]);
    for (const path of ['/sales', '/inventory', '/returns', '/events', '/event-subscriptions', '/api-keys', '/branches']) {
      expect([path, (await call('GET', path, reader.key)).status]).toEqual([path, 200]);
    }
    // A resource's write includes its read; another resource's is refused.
    const seller = await create(KEY_A, 'Tienda', ['sales:write']);
    expect((await call('GET', '/sales', seller.key)).status).toBe(200);
    const other = await call('GET', '/inventory', seller.key);
    expect([other.status, other.headers.get('x-accepted-scopes')]).toEqual([403, 'inventory:read']);
    // The quota's status needs no scope, and tells the key's.
    const quota = await call('GET', '/system/rate-limit', seller.key);
    expect(quota.body.data).toMatchObject({ alcances: ['sales:write'], expira_el: null });
  });

  it("counts every key of a company against the company's one hourly quota", async () => {
    const other = await create(KEY_A, 'Segunda', ['sales:read']);
    const first = await call('GET', '/system/rate-limit', KEY_A);
    const second = await call('GET', '/system/rate-limit', other.key);
    expect(second.body.data.requests_used).toBe(first.body.data.requests_used + 1);
    expect(second.headers.get('x-ratelimit-remaining')).toBe(String(Number(first.headers.get('x-ratelimit-remaining')) - 1));
    // Another company's count is its own.
    const b = await call('GET', '/system/rate-limit', KEY_B);
    expect(b.body.data.requests_used).toBeLessThan(second.body.data.requests_used);
  });

  it('lets a key create only keys within its own scopes, and shows each key without its secret', async () => {
    const manager = await create(KEY_A, 'Integrador', ['sales:write', 'keys:write']);
    const beyond = await call('POST', '/api-keys', manager.key, { nombre: 'más', alcances: ['sales:read', 'inventory:read'] });
    expect([beyond.status, beyond.body.reason]).toEqual([403, 'alcance_insuficiente']);
    expect(beyond.body.error).toContain('inventory:read');
    const within = await create(manager.key, 'Lector de ventas', ['sales:read', 'sales:read']);
    expect(within.alcances).toEqual(['sales:read']);
    expect((await call('GET', '/sales', within.key)).status).toBe(200);
    const unknown = await call('POST', '/api-keys', KEY_A, { nombre: 'x', alcances: ['sales:admin'], extra: 1 });
    expect([unknown.status, Object.keys(unknown.body.details).sort()]).toEqual([422, ['alcances.0', 'extra']]);
    const past = await call('POST', '/api-keys', KEY_A, { nombre: 'x', alcances: ['sales:read'], expira_el: '2020-01-01T00:00:00Z' });
    expect([past.status, past.body.details]).toEqual([422, { expira_el: ['Debe estar en el futuro'] }]);

    await sleep(600); // the last use is written in batches (every 200 ms here)
    const listed = await call('GET', '/api-keys', KEY_A);
    const mine = listed.body.data.find((k: Listed) => k.id === within.id);
    expect(mine).toEqual({
      id: within.id,
      nombre: 'Lector de ventas',
      prefijo: within.key.slice(0, 9),
      alcances: ['sales:read'],
      created_at: expect.any(String),
      expira_el: null,
      ultimo_uso: expect.any(String),
      ultima_direccion: expect.any(String),
    });
    expect(JSON.stringify(listed.body)).not.toContain(within.key);
    // Another company's keys are neither listed nor reachable.
    expect((await call('GET', '/api-keys', KEY_B)).body.data.map((k: Listed) => k.id)).not.toContain(within.id);
    expect((await call('DELETE', `/api-keys/${within.id}`, KEY_B)).status).toBe(404);
  });

  it('rotates a key: both work through the grace on every replica, then only the new one', async () => {
    const old = await create(KEY_A, 'Rotada', ['inventory:read']);
    // Cached by both replicas before the rotation.
    expect((await call('GET', '/inventory', old.key)).status).toBe(200);
    expect((await call('GET', '/inventory', old.key, undefined, secondUrl)).status).toBe(200);
    const rotated = await call('POST', `/api-keys/${old.id}/rotate`, KEY_A, { gracia_segundos: 8 });
    expect(rotated.status).toBe(201);
    const fresh = rotated.body.data;
    expect([fresh.alcances, fresh.nombre, fresh.key === old.key]).toEqual([['inventory:read'], 'Rotada', false]);
    for (const base of [undefined, secondUrl]) {
      expect((await call('GET', '/inventory', old.key, undefined, base)).status).toBe(200);
      expect((await call('GET', '/inventory', fresh.key, undefined, base)).status).toBe(200);
    }
    const listed = (await call('GET', '/api-keys', KEY_A)).body.data.find((k: Listed) => k.id === old.id);
    expect(Date.parse(listed.expira_el) - Date.now()).toBeLessThanOrEqual(8_000);
    expect((await call('POST', `/api-keys/${old.id}/rotate`, KEY_A)).status).toBe(422);
    await eventually(async () => {
      const rotatedEvent = keyEvents().find((e) => e.type === 'api_key.rotated' && e.data.id === old.id);
      expect(rotatedEvent?.data).toEqual({
        id: old.id,
        nombre: 'Rotada',
        prefijo: old.prefijo,
        alcances: ['inventory:read'],
        expira_el: listed.expira_el,
        id_sucesor: fresh.id,
      });
    }, 10_000);
    await sleep(Math.max(0, Date.parse(listed.expira_el) - Date.now()) + 200);
    for (const base of [undefined, secondUrl]) {
      const expired = await call('GET', '/inventory', old.key, undefined, base);
      expect([expired.status, expired.body.reason, expired.body.error]).toEqual([
        401,
        'clave_expirada',
        'API key inválido o empresa inactiva',
      ]);
      expect((await call('GET', '/inventory', fresh.key, undefined, base)).status).toBe(200);
    }
  });

  it('tells the company once, seven days ahead, that a key is about to expire', async () => {
    const inThreeDays = new Date(Date.now() + 3 * 24 * 3600_000).toISOString();
    const expiring = await create(KEY_A, 'Vence pronto', ['returns:read'], { expira_el: inThreeDays });
    const later = await create(KEY_A, 'Vence más tarde', ['returns:read'], {
      expira_el: new Date(Date.now() + 30 * 24 * 3600_000).toISOString(),
    });
    await eventually(async () => {
      expect(
        keyEvents()
          .filter((e) => e.type === 'api_key.expiring')
          .map((e) => e.data),
      ).toEqual([
        {
          id: expiring.id,
          nombre: 'Vence pronto',
          prefijo: expiring.prefijo,
          alcances: ['returns:read'],
          expira_el: inThreeDays,
          id_sucesor: null,
        },
      ]);
    }, 10_000);
    // Sweeps go on every 200 ms: neither a second notice nor one for the key that expires later.
    await sleep(1_000);
    expect(
      keyEvents()
        .filter((e) => e.type === 'api_key.expiring')
        .map((e) => e.data.id),
    ).toEqual([expiring.id]);
    expect(keyEvents().some((e) => e.data.id === later.id)).toBe(false);
  });

  it('expires a key at its expira_el', async () => {
    const soon = await create(KEY_A, 'Temporal', ['sales:read'], { expira_el: new Date(Date.now() + 5_000).toISOString() });
    expect((await call('GET', '/sales', soon.key)).status).toBe(200);
    expect(await msUntilStatus(() => stack.api(`${API}/sales`, { key: soon.key }), 401, 12_000)).toBeLessThan(12_000);
    expect((await call('GET', '/sales', soon.key)).body.reason).toBe('clave_expirada');
  });

  it('revokes at once on every replica, never the last key able to manage keys', async () => {
    // Either replica may take the bus request that revokes: several keys, so both are met.
    const doomed: Awaited<ReturnType<typeof create>>[] = [];
    for (let i = 0; i < 4; i++) doomed.push(await create(KEY_A, `Revocada ${i}`, ['sales:read']));
    for (const key of doomed) {
      expect((await call('GET', '/sales', key.key)).status).toBe(200);
      expect((await call('GET', '/sales', key.key, undefined, secondUrl)).status).toBe(200);
      expect((await call('DELETE', `/api-keys/${key.id}`, KEY_A)).status).toBe(200);
      // The replica that answered forgets it at once; the other within a moment, through the bus.
      expect((await call('GET', '/sales', key.key)).status).toBe(401);
      expect(
        await msUntilStatus(() => fetch(`${secondUrl}${API}/sales`, { headers: { Authorization: `Bearer ${key.key}` } }), 401),
      ).toBeLessThan(5_000);
    }

    await eventually(async () => {
      expect(
        keyEvents()
          .filter((e) => e.type === 'api_key.revoked')
          .map((e) => e.data.id),
      ).toEqual(doomed.map((key) => key.id));
    }, 10_000);

    // Company B's only key manages keys: it cannot revoke itself.
    const keys = (await call('GET', '/api-keys', KEY_B)).body.data;
    expect(keys).toHaveLength(1);
    const last = await call('DELETE', `/api-keys/${keys[0].id}`, KEY_B);
    expect([last.status, last.body.reason]).toEqual([422, 'regla_de_negocio']);
    expect((await call('GET', '/sales', KEY_B)).status).toBe(200);
  });

  it('records the last use by hour and address in batches, not with a write per request', async () => {
    const key = await create(KEY_A, 'Uso', ['sales:read']);
    await stack.query(`
      create table public.api_key_updates (n int);
      create function public.count_api_key_update() returns trigger language plpgsql security definer as $$
        begin insert into public.api_key_updates values (1); return null; end $$;
      create trigger count_updates after update on gateway.api_keys for each row
        when (old.ultimo_uso is distinct from new.ultimo_uso or old.ultima_direccion is distinct from new.ultima_direccion)
        execute function public.count_api_key_update();`);
    try {
      for (let i = 0; i < 40; i++) expect((await call('GET', '/sales', key.key)).status).toBe(200);
      await sleep(1_000);
      const [{ n }] = (await stack.query<{ n: number }>('select count(*)::int as n from public.api_key_updates')) as [{ n: number }];
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(2);
      const listed = (await call('GET', '/api-keys', KEY_A)).body.data.find((k: Listed) => k.id === key.id);
      const hour = Math.floor(Date.now() / 3600_000) * 3600_000;
      expect(Date.parse(listed.ultimo_uso)).toBe(hour);
      expect(listed.ultima_direccion).toMatch(/127\.0\.0\.1/);
    } finally {
      await stack.query(
        'drop trigger count_updates on gateway.api_keys; drop function public.count_api_key_update(); drop table public.api_key_updates',
      );
    }
  });

  it('refuses a key whose checksum fails without reading the database', async () => {
    const good = await create(KEY_A, 'Suma', ['sales:read']);
    const typo = good.key.slice(0, 12) + (good.key[12] === 'x' ? 'y' : 'x') + good.key.slice(13);
    // While api_keys is locked, any key lookup waits: the typo's answer cannot have read it.
    const locker = new pg.Client({ connectionString: stack.iso.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table gateway.api_keys in access exclusive mode');
      const typoAnswer = await Promise.race([call('GET', '/sales', typo), sleep(5_000).then(() => undefined)]);
      expect([typoAnswer?.status, typoAnswer?.body.reason]).toEqual([401, 'clave_invalida']);
      // A well-formed unknown key does look it up, and so waits for the lock.
      const unknownKey = generateApiKey();
      const lookup = Promise.race([call('GET', '/sales', unknownKey).then(() => 'answered'), sleep(1_500).then(() => 'waiting')]);
      expect(await lookup).toBe('waiting');
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
  });
});
