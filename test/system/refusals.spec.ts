import { Redis } from 'ioredis';
import type { SeedOutput } from '@erp/back-office';
import { Stack, json } from '../support/stack';
import {
  API,
  SALES_KEY_A,
  SALES_KEY_B,
  SALES_KEY_STRICT,
  dataSnapshot,
  postSale,
  refsOf,
  saleBody,
  salesFixture,
  type SalesRefs,
} from '../support/sales-fixture';

const HOUR = 3_600_000;

/**
 * The partner contract of refusals (DESIGN §3.14): nothing sent is silently ignored (an unknown
 * body field is 422, an unknown query parameter 400, each named in `details`), and every refusal
 * carries a `reason` from the documented enum beside `code`, changing nothing. Every answer is
 * also checked against the OpenAPI document when the stack stops, `reason` against its enum.
 */
describe('refusals: strict input and a machine-readable reason', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;
  let d: SalesRefs;
  let redis: Redis;
  // The quota's window is the clock's hour: fixed, so the 429 case fills exactly its counter.
  const now = Date.UTC(2026, 10, 25, 18, 10, 0);

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'], gatewayOptions: { clock: () => now } });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
    d = refsOf(seeded, 'd');
    redis = new Redis(stack.iso.redisUrl);
  });
  afterAll(async () => {
    await redis.quit();
    await stack.stop();
  });

  const get = (path: string, key = SALES_KEY_A) => stack.api(`${API}${path}`, { key });
  const send = (method: 'POST' | 'PUT', path: string, body: unknown, key = SALES_KEY_A) =>
    stack.api(`${API}${path}`, { key, method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  describe('an unknown body field', () => {
    it('is refused with 422 campo_desconocido naming it, and books nothing', async () => {
      const before = await dataSnapshot(stack);
      const res = await send('POST', '/sales', saleBody(a, { referencia_externa: 'strict-typo-1', id_clientee: a.clientes.juan }));
      expect(res.status).toBe(422);
      expect(await json(res)).toEqual({
        success: false,
        error: 'Datos inválidos',
        code: 422,
        reason: 'campo_desconocido',
        details: { id_clientee: ['Campo desconocido'] },
      });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('is named by its path inside a line, beside the field it was meant to be', async () => {
      const before = await dataSnapshot(stack);
      const res = await send('POST', '/sales', saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantida: 2 }] }));
      expect(res.status).toBe(422);
      const body = await json(res);
      expect(body).toMatchObject({ code: 422, reason: 'campo_desconocido' });
      expect(body.details).toEqual({ 'detalles.0.cantida': ['Campo desconocido'], 'detalles.0.cantidad': [expect.any(String)] });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('is refused on PUT /sales/{id} too, the sale left as it was', async () => {
      const created = await postSale(stack, SALES_KEY_A, saleBody(a, { estado: 'Cotizacion', id_documento: a.documentos.cotizacion }));
      expect(created.status).toBe(201);
      const before = await dataSnapshot(stack);
      const res = await send('PUT', `/sales/${created.body.data.id}`, {
        observaciones: 'cambio',
        detalles: [{ id: created.body.data.detalles[0].id, cantidad: 2, precio_unitario: 1 }],
      });
      expect(res.status).toBe(422);
      expect(await json(res)).toMatchObject({
        reason: 'campo_desconocido',
        details: { 'detalles.0.precio_unitario': ['Campo desconocido'] },
      });
      expect(await dataSnapshot(stack)).toEqual(before);
      expect((await json(await get(`/sales/${created.body.data.id}`))).data).toEqual(created.body.data);
    });

    it('is refused on POST /event-subscriptions before any service is asked', async () => {
      const res = await send('POST', '/event-subscriptions', { url: 'https://example.com/hook', events: ['*'], secreto: 'mine' });
      expect(res.status).toBe(422);
      expect(await json(res)).toMatchObject({ reason: 'campo_desconocido', details: { secreto: ['Campo desconocido'] } });
    });
  });

  describe('an unknown query parameter', () => {
    it.each([
      ['/sales?perPage=1', { perPage: ['Parámetro desconocido'] }],
      ['/sales?per_page=1&estados=Completada', { estados: ['Parámetro desconocido'] }],
      ['/sales/summary?fecha=2026-03-10', { fecha: ['Parámetro desconocido'] }],
      ['/inventory?search=laptop&page=1', { search: ['Parámetro desconocido'] }],
      ['/inventory/summary?bodega=1', { bodega: ['Parámetro desconocido'] }],
      ['/returns?venta=1', { venta: ['Parámetro desconocido'] }],
      ['/events?limit=5', { limit: ['Parámetro desconocido'] }],
      ['/system/rate-limit?verbose=true', { verbose: ['Parámetro desconocido'] }],
    ])('%s is refused with 400 parametro_desconocido naming it', async (path, details) => {
      const res = await get(path);
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({
        success: false,
        error: 'Parámetros inválidos',
        code: 400,
        reason: 'parametro_desconocido',
        details,
      });
    });

    it.each(['/sales?__proto__=1', '/inventory?__proto__=1&__proto__=2', '/inventory/summary?__proto__=1'])(
      '%s is refused naming __proto__ like any other parameter',
      async (path) => {
        const res = await get(path);
        expect(res.status).toBe(400);
        const body = await json(res);
        expect(body.reason).toMatch(/^parametro_(desconocido|invalido)$/);
        expect(Object.keys(body.details)).toEqual(['__proto__']);
      },
    );

    it('is named beside the invalid ones, the reason saying the unknown first', async () => {
      const res = await get('/sales?page=0&perPage=1');
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({
        reason: 'parametro_desconocido',
        details: { page: [expect.any(String)], perPage: ['Parámetro desconocido'] },
      });
    });

    it('on a path with an id too', async () => {
      const res = await get(`/inventory/${a.productos.laptop}?expand=inventarios`);
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ reason: 'parametro_desconocido', details: { expand: ['Parámetro desconocido'] } });
    });

    it('while an invalid known one is parametro_invalido', async () => {
      const res = await get('/sales?per_page=500');
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ reason: 'parametro_invalido', details: { per_page: [expect.any(String)] } });
    });
  });

  describe('the reason of each refusal', () => {
    it('a product or a sale that does not exist', async () => {
      expect(await json(await get('/inventory/999999'))).toMatchObject({ code: 404, reason: 'producto_no_encontrado' });
      expect(await json(await get('/sales/999999'))).toMatchObject({ code: 404, reason: 'venta_no_encontrada' });
    });

    it('a line naming a product the company does not have: 422 producto_no_encontrado, nothing booked', async () => {
      const before = await dataSnapshot(stack);
      const { status, body } = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { detalles: [{ codigo_producto: 'NO-EXISTE', cantidad: 1 }] }),
      );
      expect(status).toBe(422);
      expect(body).toMatchObject({ reason: 'producto_no_encontrado', details: { 'detalles.0.codigo_producto': [expect.any(String)] } });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('more than the warehouse holds where the company forbids it: 422 stock_insuficiente, nothing moved', async () => {
      const before = await dataSnapshot(stack);
      const { status, body } = await postSale(
        stack,
        SALES_KEY_STRICT,
        saleBody(d, { detalles: [{ id_producto: d.productos.laptop, cantidad: 50 }] }),
      );
      expect(status).toBe(422);
      expect(body).toMatchObject({ code: 422, reason: 'stock_insuficiente', details: { 'detalles.0.cantidad': [expect.any(String)] } });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('a Pendiente sale past the customer credit: 422 limite_credito, nothing booked', async () => {
      const before = await dataSnapshot(stack);
      const { status, body } = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { estado: 'Pendiente', id_cliente: a.clientes.juan, detalles: [{ id_producto: a.productos.laptop, cantidad: 2 }] }),
      );
      expect(status).toBe(422);
      expect(body).toMatchObject({ code: 422, reason: 'limite_credito', details: { id_cliente: [expect.stringContaining('límite')] } });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('a change to a completed sale: 422 estado_no_modificable, the sale untouched', async () => {
      const created = await postSale(stack, SALES_KEY_A, saleBody(a));
      expect(created.status).toBe(201);
      const before = await dataSnapshot(stack);
      const res = await send('PUT', `/sales/${created.body.data.id}`, { observaciones: 'otra' });
      expect(res.status).toBe(422);
      expect(await json(res)).toMatchObject({ code: 422, reason: 'estado_no_modificable', details: { estado: [expect.any(String)] } });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('a body that is not JSON: 400 json_invalido', async () => {
      const res = await stack.api(`${API}/sales`, {
        key: SALES_KEY_A,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"fecha":',
      });
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ reason: 'json_invalido' });
    });

    it.each([
      ['no header', {}, 'clave_ausente'],
      ['another scheme', { Authorization: 'Token test_key_sales_a_0123456789abcdef' }, 'clave_malformada'],
      ['an unknown key', { Authorization: 'Bearer test_key_unknown_0123456789abcdef' }, 'clave_invalida'],
    ])('401 with %s: %s', async (_case, headers, reason) => {
      const res = await stack.api(`${API}/sales`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await json(res)).toMatchObject({ code: 401, reason });
    });

    it('the hourly quota spent: 429 cuota_excedida', async () => {
      const [row] = await stack.query<{ id: number }>(
        "select empresa_id as id from gateway.api_keys where key_hash = sha256(convert_to($1, 'UTF8'))",
        [SALES_KEY_B],
      );
      await redis.set(`${stack.iso.redisKeyPrefix}:rl:empresa:${row!.id}:${Math.floor(now / HOUR) * 3600}`, '1000');
      const res = await get('/sales', SALES_KEY_B);
      expect(res.status).toBe(429);
      expect(await json(res)).toMatchObject({ code: 429, reason: 'cuota_excedida' });
    });

    it('an unknown route and a method a route does not have', async () => {
      expect(await json(await get('/ventas'))).toMatchObject({ code: 404, reason: 'ruta_desconocida' });
      const res = await stack.api(`${API}/sales/summary`, { key: SALES_KEY_A, method: 'DELETE' });
      expect(await json(res)).toMatchObject({ code: 405, reason: 'metodo_no_admitido' });
    });
  });
});
