import { connect } from 'node:net';
import pg from 'pg';
import type { SeedOutput } from '@erp/back-office';
import { eventually } from '@erp/testing';
import { recordResponse } from '../support/recording';
import { KEY_A, Stack, json, twoCompanies } from '../support/stack';

/** Sends `request` as raw bytes (what fetch refuses to send) and answers the gateway's reply as a Response, recorded for the contract check. */
async function rawExchange(baseUrl: string, path: string, request: string): Promise<Response> {
  const { hostname, port } = new URL(baseUrl);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
  const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)];
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = new Headers(lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
  const res = new Response(body, { status: Number(statusLine!.split(' ')[1]), headers });
  recordResponse(`${baseUrl}${path}`, 'GET', res);
  return res;
}

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

  it('answers a request the HTTP parser refuses (a header name with a space) with 400 in the envelope', async () => {
    const path = '/api/external/v1';
    const res = await rawExchange(stack.baseUrl, path, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-Bad Header: 1\r\n\r\n`);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await json(res)).toEqual({
      success: false,
      error: 'La solicitud HTTP está mal formada',
      code: 400,
      reason: 'solicitud_malformada',
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

describe('a gateway serving its maximum of requests at once', () => {
  let stack: Stack;
  let seeded: SeedOutput;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'packages'], gateway: { MAX_INFLIGHT_REQUESTS: '1' } });
    seeded = await stack.seed(twoCompanies());
  });
  afterAll(() => stack.stop());

  it('answers any other request 503 servidor_saturado with Retry-After at once, and serves again when the one in flight ends', async () => {
    const a = seeded.empresas.a!;
    const product = `/api/external/v1/inventory/${(a.productos as Record<string, number>).laptop}`;
    // The import waits on a lock this test holds: it stays in flight until the lock is released.
    const locker = new pg.Client({ connectionString: stack.iso.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table packages.paquetes in access exclusive mode');
      const item = {
        cliente: 'Juan Pérez',
        codigo_asesor: 'AS-01',
        wr: 'WR-SATURADO',
        guia: 'GU-SATURADO',
        embalaje: 'Caja',
        piezas: 1,
        peso: 1,
        precio: 10,
        cuenta_a_terceros: 0,
        otros: 0,
        total: 10,
        id_sucursal: (a.sucursales as Record<string, number>).centro,
      };
      const inFlight = stack.api('/api/external/v1/packages/import', {
        key: KEY_A,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ packages: [item] }),
      });
      await eventually(async () => {
        const waiting = await stack.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        );
        expect(waiting[0]!.n).toBeGreaterThan(0);
      });
      const refused = await stack.api(product, { key: KEY_A });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBeTruthy();
      expect(await json(refused)).toMatchObject({ success: false, code: 503, reason: 'servidor_saturado' });

      await locker.query('rollback');
      expect((await inFlight).status).toBe(200);
      expect((await stack.api(product, { key: KEY_A })).status).toBe(200);
    } finally {
      await locker.end();
    }
  });
});
