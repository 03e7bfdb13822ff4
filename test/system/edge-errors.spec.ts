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
      expect(await json(res)).toEqual({ success: false, error: 'Ruta no encontrada', code: 404, reason: 'ruta_desconocida' });
    },
  );

  it.each(['DELETE', 'PATCH', 'POST', 'PUT'])('answers %s on a read-only route with 405 and an Allow header', async (method) => {
    const res = await stack.api(product(), { key: KEY_A, method, headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await json(res)).toEqual({ success: false, error: 'Método no permitido', code: 405, reason: 'metodo_no_admitido' });
  });

  describe('on a write route', () => {
    const post = (body: string | Buffer, contentType = 'application/json') =>
      stack.api('/api/external/v1/packages/import', { key: KEY_A, method: 'POST', headers: { 'Content-Type': contentType }, body });

    it('answers malformed JSON with 400', async () => {
      const res = await post('{"packages": [');
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({
        success: false,
        error: 'El cuerpo de la solicitud no es JSON válido',
        code: 400,
        reason: 'json_invalido',
      });
    });

    it('answers a body over 1 MB with 413 before reading it all', async () => {
      const res = await post(Buffer.alloc(1024 * 1024 + 1, 'a'));
      expect(res.status).toBe(413);
      expect(await json(res)).toEqual({
        success: false,
        error: 'El cuerpo de la solicitud supera el máximo de 1 MB',
        code: 413,
        reason: 'cuerpo_demasiado_grande',
      });
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('answers a %s body with 415', async (type) => {
      const res = await post('packages=1', type);
      expect(res.status).toBe(415);
      expect(await json(res)).toEqual({
        success: false,
        error: 'El contenido debe enviarse como application/json',
        code: 415,
        reason: 'tipo_de_contenido_no_admitido',
      });
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

  describe('on oversized requests', () => {
    it('answers a URL over 8 KB with 414 in the envelope, before the key is checked', async () => {
      const res = await stack.api(`/api/external/v1/inventory?nombre=${'a'.repeat(9_000)}`);
      expect(res.status).toBe(414);
      expect(await json(res)).toEqual({
        success: false,
        error: 'La URL supera el máximo de 8 KB',
        code: 414,
        reason: 'url_demasiado_larga',
      });
      expect(res.headers.get('x-request-id')).toBeTruthy();
    });

    it('answers a URL past what the HTTP parser reads (64 KB of request line and headers) with 431 in the envelope, not a bare status', async () => {
      const res = await stack.api(`/api/external/v1/inventory?nombre=${'a'.repeat(70_000)}`, { key: KEY_A });
      expect(res.status).toBe(431);
      expect(await json(res)).toEqual({
        success: false,
        error: 'Los encabezados de la solicitud superan el máximo de 16 KB',
        code: 431,
        reason: 'encabezados_demasiado_grandes',
      });
    });

    it('answers headers past what the HTTP parser reads in the envelope too', async () => {
      const res = await stack.api(product(), { key: KEY_A, headers: { 'X-Padding': 'p'.repeat(70_000) } });
      expect(res.status).toBe(431);
      expect(await json(res)).toEqual({
        success: false,
        error: 'Los encabezados de la solicitud superan el máximo de 16 KB',
        code: 431,
        reason: 'encabezados_demasiado_grandes',
      });
    });

    it('answers headers over 16 KB with 431 in the envelope', async () => {
      const res = await stack.api(product(), { key: KEY_A, headers: { 'X-Padding': 'p'.repeat(17_000) } });
      expect(res.status).toBe(431);
      expect(await json(res)).toEqual({
        success: false,
        error: 'Los encabezados de la solicitud superan el máximo de 16 KB',
        code: 431,
        reason: 'encabezados_demasiado_grandes',
      });
    });

    it('still serves a URL and headers just under the limits', async () => {
      // Padded with encoded spaces the filter trims: an unknown parameter would be refused.
      const res = await stack.api(`/api/external/v1/inventory?nombre=Laptop${'%20'.repeat(2_660)}`, {
        key: KEY_A,
        headers: { 'X-Padding': 'p'.repeat(15_000) },
      });
      expect(res.status).toBe(200);
      expect((await json(res)).data.map((p: { codigo: string }) => p.codigo)).toEqual(['LAP-14']);
    });
  });

  describe('on an ambiguous query string', () => {
    const list = (query: string) => stack.api(`/api/external/v1/inventory?${query}`, { key: KEY_A });

    it('answers a repeated parameter with 400 naming it, in Spanish', async () => {
      const res = await list('nombre=a&nombre=b');
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({
        success: false,
        error: 'Parámetros inválidos',
        code: 400,
        reason: 'parametro_invalido',
        details: { nombre: ['Se envió más de una vez: debe enviarse una sola vez'] },
      });
    });

    it.each(['nombre[]=x', 'nombre[a]=b', 'page=1&tipo[0]=Producto'])(
      'answers the bracketed parameter in %p with 400 naming it, instead of dropping the filter',
      async (query) => {
        const res = await list(query);
        expect(res.status).toBe(400);
        const body = await json(res);
        const name = decodeURIComponent(query.split('&').pop()!.split('=')[0]!);
        expect(body).toEqual({
          success: false,
          error: 'Parámetros inválidos',
          code: 400,
          reason: 'parametro_invalido',
          details: { [name]: ['Los nombres de parámetro no llevan corchetes: envíe nombre=valor'] },
        });
      },
    );

    it('answers an enum in another case with 400: enumerations are exact', async () => {
      const res = await list('order_direction=DESC');
      expect(res.status).toBe(400);
      expect(Object.keys((await json(res)).details)).toEqual(['order_direction']);
      expect((await list('order_direction=desc')).status).toBe(200);
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
    expect(await json(down)).toEqual({
      success: false,
      error: 'Servicio no disponible (inventory)',
      code: 503,
      reason: 'servicio_no_disponible',
    });

    await stack.startService('inventory');
    const up = await stack.api(product(), { key: KEY_A });
    expect(up.status).toBe(200);
  });
});
