import { createHash } from 'node:crypto';
import { gatewaySubjects } from '@erp/contracts';
import { KEY_A, KEY_B, Stack, json, msUntilStatus, twoCompanies } from '../support/stack';
import type { SeedOutput } from '@erp/back-office';

const UNAUTHORIZED = { success: false, error: 'API key inválido o empresa inactiva', code: 401, reason: 'clave_invalida' };
// Every 401 says the spec's message; the reason and the header's detail tell the cases apart.
const MISSING = {
  ...UNAUTHORIZED,
  reason: 'clave_ausente',
  details: { Authorization: ['Falta el encabezado: envíe Authorization: Bearer <API key>'] },
};
const MALFORMED = {
  ...UNAUTHORIZED,
  reason: 'clave_malformada',
  details: { Authorization: ['Debe ser «Bearer» seguido del API key'] },
};
const ctx = { requestId: 'auth-spec' };

describe('API key authentication at the gateway', () => {
  let stack: Stack;
  let seeded: SeedOutput;

  beforeAll(async () => {
    // A long cache TTL proves that revocation works through the bus event, not through expiry.
    // One proxy hop is trusted, so a test can speak from addresses of its own with X-Forwarded-For.
    stack = await Stack.start({
      services: ['gateway', 'inventory'],
      gateway: { AUTH_CACHE_TTL_MS: '600000', AUTH_NEGATIVE_CACHE_TTL_MS: '600000', AUTH_FAILURES_PER_WINDOW: '20', TRUST_PROXY_HOPS: '1' },
    });
    seeded = await stack.seed(twoCompanies());
  });
  afterAll(() => stack.stop());

  const path = '/api/external/v1/system/rate-limit';

  it.each([
    ['no Authorization header', {}, MISSING],
    ['an empty Authorization header', { Authorization: '' }, MISSING],
    ['a Basic scheme', { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, MALFORMED],
    ['a Bearer with nothing after it', { Authorization: 'Bearer ' }, MALFORMED],
    ['a key too short to be one', { Authorization: 'Bearer abc' }, MALFORMED],
    ['a key with a character keys never have', { Authorization: `Bearer ${KEY_A}\u00e9` }, MALFORMED],
    ['an unknown key', { Authorization: 'Bearer unknown_key_0000000000000000000000' }, UNAUTHORIZED],
  ])('refuses %s with 401 saying why, without rate-limit headers', async (_case, headers, expected) => {
    const res = await stack.api(path, { headers });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual(expected);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('remembers an unknown key without asking Postgres again, until credentials change', async () => {
    const key = 'test_key_negative_cache_5a7c9e1b3d';
    expect((await stack.api(path, { key })).status).toBe(401);
    // The key appears in the table behind the gateway's back: a cached "unknown" still refuses it.
    const hash = createHash('sha256').update(key).digest();
    await stack.query('insert into gateway.api_keys (empresa_id, key_hash, prefix, activo) values ($1, $2, $3, true)', [
      seeded.empresas.a!.id,
      hash,
      key.slice(0, 8),
    ]);
    expect((await stack.api(path, { key })).status).toBe(401);
    // Any announced change of credentials forgets every unknown key.
    await stack.admin.request(
      gatewaySubjects,
      'gateway.admin.empresa.set-active',
      { empresa_id: seeded.empresas.a!.id, activo: true },
      ctx,
    );
    expect(await msUntilStatus(() => stack.api(path, { key }), 200)).toBeLessThan(5_000);
  });

  it('refuses an address that failed too often with 429 until its window ends, any key included, and no other address', async () => {
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    for (let i = 0; i < 20; i++) {
      const res = await stack.api(path, { key: `test_key_guess_${String(i).padStart(20, '0')}`, headers: from('203.0.113.7') });
      expect(res.status).toBe(401);
    }
    const blocked = await stack.api(path, { key: KEY_A, headers: from('203.0.113.7') });
    expect(blocked.status).toBe(429);
    expect(await json(blocked)).toEqual({
      success: false,
      error: 'Demasiados intentos de autenticación fallidos desde esta dirección; reintente después de Retry-After',
      code: 429,
      reason: 'demasiados_intentos',
    });
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    expect((await stack.api(path, { key: KEY_A, headers: from('198.51.100.9') })).status).toBe(200);
    expect((await stack.api(path, { key: KEY_A })).status).toBe(200);
  });

  it('identifies the company by the key and names it in meta', async () => {
    const res = await stack.api(path, { key: KEY_B });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.meta.empresa).toBe('Empresa B');
    expect(body.data).toMatchObject({ empresa_id: seeded.empresas.b!.id, empresa_nombre: 'Empresa B' });
  });

  it('stops accepting a revoked key within seconds, without a restart', async () => {
    const empresaId = seeded.empresas.a!.id;
    const created = await stack.admin.request(gatewaySubjects, 'gateway.admin.apikey.create', { empresa_id: empresaId }, ctx);
    expect((await stack.api(path, { key: created.key })).status).toBe(200); // now cached
    await stack.admin.request(gatewaySubjects, 'gateway.admin.apikey.revoke', { id: created.id }, ctx);
    const ms = await msUntilStatus(() => stack.api(path, { key: created.key }), 401);
    expect(ms).toBeLessThan(5_000);
    // Revoked reads exactly as unknown: the answer never tells whether a key exists.
    expect(await json(await stack.api(path, { key: created.key }))).toEqual(UNAUTHORIZED);
    expect((await stack.api(path, { key: KEY_A })).status).toBe(200);
  });

  it('refuses every key of an inactive company within seconds, and accepts them again once reactivated', async () => {
    const empresaId = seeded.empresas.b!.id;
    expect((await stack.api(path, { key: KEY_B })).status).toBe(200);
    await stack.admin.request(gatewaySubjects, 'gateway.admin.empresa.set-active', { empresa_id: empresaId, activo: false }, ctx);
    expect(await msUntilStatus(() => stack.api(path, { key: KEY_B }), 401)).toBeLessThan(5_000);
    expect(await json(await stack.api(path, { key: KEY_B }))).toEqual(UNAUTHORIZED);
    expect((await stack.api(path, { key: KEY_A })).status).toBe(200);
    await stack.admin.request(gatewaySubjects, 'gateway.admin.empresa.set-active', { empresa_id: empresaId, activo: true }, ctx);
    expect((await stack.api(path, { key: KEY_B })).status).toBe(200);
  });

  it('stores keys only as hashes', async () => {
    const rows = await stack.query<{ key_hash: Buffer; prefix: string }>('select key_hash, prefix from gateway.api_keys');
    const hashes = rows.map((r) => r.key_hash.toString('hex'));
    expect(hashes.every((h) => h.length === 64)).toBe(true);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(KEY_A);
    expect(dump).not.toContain(KEY_B);
  });
});
