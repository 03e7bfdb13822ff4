import { KEY_A, Stack, json, twoCompanies } from '../support/stack';
import type { SeedOutput } from '@erp/admin';

describe('gateway error envelope and service availability', () => {
  let stack: Stack;
  let seeded: SeedOutput;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'packages'] });
    seeded = await stack.seed(twoCompanies());
  });
  afterAll(() => stack.stop());

  const product = () => `/api/external/v1/inventory/${(seeded.empresas.a!.productos as Record<string, number>).laptop}`;

  it.each(['/api/external/v1/nothing-here', '/api/external/v2/inventory/1', '/', '/api/external/v1/inventory/1/extra'])(
    'answers an unknown route %p with 404 in the error envelope',
    async (path) => {
      const res = await stack.api(path, { key: KEY_A });
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ success: false, error: 'Ruta no encontrada', code: 404 });
    },
  );

  it.each(['DELETE', 'PATCH', 'POST', 'PUT'])('answers %s on a read-only route with 405 and an Allow header', async (method) => {
    const res = await stack.api(product(), { key: KEY_A, method, headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await json(res)).toEqual({ success: false, error: 'Método no permitido', code: 405 });
  });

  describe('on a write route', () => {
    const post = (body: string | Buffer, contentType = 'application/json') =>
      stack.api('/api/external/v1/packages/import', { key: KEY_A, method: 'POST', headers: { 'Content-Type': contentType }, body });

    it('answers malformed JSON with 400', async () => {
      const res = await post('{"packages": [');
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ success: false, error: 'El cuerpo de la solicitud no es JSON válido', code: 400 });
    });

    it('answers a body over 1 MB with 413 before reading it all', async () => {
      const res = await post(Buffer.alloc(1024 * 1024 + 1, 'a'));
      expect(res.status).toBe(413);
      expect(await json(res)).toEqual({ success: false, error: 'El cuerpo de la solicitud supera el máximo de 1 MB', code: 413 });
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('answers a %s body with 415', async (type) => {
      const res = await post('packages=1', type);
      expect(res.status).toBe(415);
      expect(await json(res)).toEqual({ success: false, error: 'El contenido debe enviarse como application/json', code: 415 });
    });

    it('answers an empty body with 400', async () => {
      const res = await stack.api('/api/external/v1/packages/import', { key: KEY_A, method: 'POST' });
      expect(res.status).toBe(400);
    });

    it('stores nothing for any of these', async () => {
      const rows = await stack.query<{ n: number }>('select count(*)::int as n from packages.paquetes');
      expect(rows[0]!.n).toBe(0);
    });
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const echoed = await stack.api(product(), { key: KEY_A, headers: { 'X-Request-Id': 'partner-req-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('partner-req-42');
    const replaced = await stack.api(product(), { key: KEY_A, headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 503 with Retry-After at once while the owning service is down, and recovers by itself when it returns', async () => {
    await stack.stopService('inventory');
    const started = Date.now();
    const down = await stack.api(product(), { key: KEY_A });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(await json(down)).toEqual({ success: false, error: 'Servicio no disponible (inventory)', code: 503 });

    await stack.startService('inventory');
    const up = await stack.api(product(), { key: KEY_A });
    expect(up.status).toBe(200);
  });
});
