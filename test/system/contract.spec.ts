import { API_BASE } from '@erp/contracts';
import { Contract, type Exchange } from '../support/contract';
import { API, SALES_KEY_A, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { Stack, json } from '../support/stack';

/**
 * Every system test's responses are checked against the OpenAPI document when its stack stops
 * (`Stack.api()` records them). This file replays one call of each kind, success and error, so
 * every operation of the document is exercised at least once, and shows the check catches drift.
 */
describe('responses against the OpenAPI document', () => {
  let stack: Stack;
  let a: SalesRefs;
  const contract = new Contract();

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook-ingest', 'subscriptions', 'exports'],
    });
    a = refsOf(await stack.seed(salesFixture()), 'a');
  });
  afterAll(() => stack.stop());

  const get = (path: string, key: string | null = SALES_KEY_A) => stack.api(`${API}${path}`, key ? { key } : {});
  const send = (method: string, path: string, body: unknown, contentType = 'application/json') =>
    stack.api(`${API}${path}`, {
      key: SALES_KEY_A,
      method,
      headers: { 'Content-Type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('gets documented answers, successes and errors, from every operation of the document (a new operation needs a call here)', async () => {
    const laptop = a.productos.laptop!;
    const statuses = async (calls: Array<Promise<Response>>) => (await Promise.all(calls)).map((r) => r.status);

    expect(await statuses([get('/inventory?per_page=2&tipo=Producto'), get('/inventory/summary'), get(`/inventory/${laptop}`)])).toEqual([
      200, 200, 200,
    ]);
    expect(await statuses([get('/inventory/999999'), get('/inventory/abc'), get('/inventory?per_page=500')])).toEqual([404, 400, 400]);

    const created = await send('POST', '/sales', saleBody(a, { referencia_externa: 'contract-1' }));
    expect(created.status).toBe(201);
    const venta = (await json(created)).data;
    expect((await send('POST', '/sales', saleBody(a, { referencia_externa: 'contract-1' }))).status).toBe(200);
    expect((await send('POST', '/sales', saleBody(a, { detalles: [{ cantidad: 0 }] }))).status).toBe(422);
    expect((await send('POST', '/sales', '{"fecha": ', 'application/json')).status).toBe(400);
    expect((await send('POST', '/sales', 'fecha=2026-01-01', 'text/plain')).status).toBe(415);
    const batch = {
      ventas: [saleBody(a, { referencia_externa: 'contract-1' }), saleBody(a, { referencia_externa: 'contract-2', detalles: [] })],
    };
    expect((await send('POST', '/sales/batch', batch)).status).toBe(200);
    expect((await send('POST', '/sales/batch', { ventas: [] })).status).toBe(400);
    expect(
      await statuses([
        get('/sales?estado=Completada&per_page=1'),
        get(`/sales/${venta.id}`),
        get('/sales/summary?fecha_inicio=2026-01-01&fecha_fin=2026-12-31'),
      ]),
    ).toEqual([200, 200, 200]);
    expect(await statuses([get('/sales/999999'), get('/sales?fecha_inicio=2026-02-30'), get('/sales/summary?estado=Pagada')])).toEqual([
      404, 400, 400,
    ]);

    const cotizacion = (
      await json(await send('POST', '/sales', saleBody(a, { estado: 'Cotizacion', id_documento: a.documentos.cotizacion })))
    ).data;
    expect((await send('PUT', `/sales/${cotizacion.id}`, { observaciones: 'Entrega el lunes' })).status).toBe(200);
    expect((await send('PUT', `/sales/${venta.id}`, { observaciones: 'Ya facturada' })).status).toBe(422);
    expect((await send('PUT', '/sales/999999', { observaciones: 'x' })).status).toBe(404);

    expect(
      await statuses([
        get(`/returns?id_venta=${venta.id}`),
        get('/returns/summary'),
        get('/returns/999999'),
        get('/returns?fecha_fin=2026-02-30'),
      ]),
    ).toEqual([200, 200, 404, 400]);

    const paquete = {
      cliente: 'Cliente',
      codigo_asesor: 'A1',
      wr: 'WR-CONTRACT-1',
      guia: 'G1',
      embalaje: 'Caja',
      piezas: 1,
      peso: 2.5,
      precio: 10,
      cuenta_a_terceros: 0,
      otros: 0,
      total: 10,
      sucursal: 'Sucursal Centro',
    };
    expect((await send('POST', '/packages/import', { packages: [paquete, { ...paquete, wr: '' }] })).status).toBe(200);
    expect((await send('POST', '/packages/import', { packages: [] })).status).toBe(400);
    expect((await send('POST', '/packages/import', { packages: ['x'.repeat(1_100_000)] })).status).toBe(413);

    const hook = await send('POST', '/event-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['sale.created', 'stock.changed'] });
    expect(hook.status).toBe(201);
    const subscription = (await json(hook)).data;
    expect((await send('POST', '/event-subscriptions', { url: 'nota url', events: [] })).status).toBe(422);
    expect(
      await statuses([
        get('/event-subscriptions'),
        get(`/event-subscriptions/${subscription.id}`),
        get(`/event-subscriptions/${subscription.id}/deliveries`),
        get('/events?per_page=5'),
        get('/event-subscriptions/999999'),
        get('/events?types=sale.exploded'),
      ]),
    ).toEqual([200, 200, 200, 200, 404, 400]);
    expect((await send('POST', `/event-subscriptions/${subscription.id}/replay`, { desde: '2026-01-01T00:00:00Z' })).status).toBe(202);
    expect(
      await statuses([
        send('PATCH', `/event-subscriptions/${subscription.id}`, { descripcion: 'Contrato', enable: 1 }),
        send('PATCH', `/event-subscriptions/${subscription.id}`, { desc: 'x' }),
        send('PATCH', '/event-subscriptions/999999', { enable: 1 }),
        send('POST', `/event-subscriptions/${subscription.id}/rotate-secret`, {}),
        send('POST', '/event-subscriptions/999999/rotate-secret', {}),
        send('POST', `/event-subscriptions/${subscription.id}/test`, {}),
        send('POST', `/event-subscriptions/${subscription.id}/test`, { x: 1 }),
        get('/events?types=*&per_page=5'),
      ]),
    ).toEqual([200, 422, 404, 200, 404, 202, 422, 200]);
    expect((await stack.api(`${API}/event-subscriptions/${subscription.id}`, { key: SALES_KEY_A, method: 'DELETE' })).status).toBe(200);
    expect((await stack.api(`${API}/event-subscriptions/${subscription.id}`, { key: SALES_KEY_A, method: 'DELETE' })).status).toBe(404);

    const exportacion = await send('POST', '/exports', { recurso: 'returns', filtros: { id_venta: venta.id } });
    expect(exportacion.status).toBe(202);
    const { id: exportId } = (await json(exportacion)).data;
    expect((await send('POST', '/exports', { recurso: 'returns', filtros: { color: 'rojo' } })).status).toBe(422);
    for (const deadline = Date.now() + 20_000; (await json(await get(`/exports/${exportId}`))).data.estado !== 'completada';) {
      if (Date.now() > deadline) throw new Error('the export did not complete');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(
      await statuses([
        get('/exports'),
        get(`/exports/${exportId}/download`),
        stack.api(`${API}/exports/${exportId}/download`, { key: SALES_KEY_A, headers: { Range: 'bytes=5-' } }),
        stack.api(`${API}/exports/${exportId}/download`, { key: SALES_KEY_A, headers: { Range: 'bytes=999999-' } }),
        get('/exports/999999'),
        get('/exports/999999/download'),
      ]),
    ).toEqual([200, 200, 206, 416, 404, 404]);
    expect((await stack.api(`${API}/exports/${exportId}`, { key: SALES_KEY_A, method: 'DELETE' })).status).toBe(200);

    expect(
      await statuses([get('/system/rate-limit'), get('/system/rate-limit', null), get('/system/rate-limit', 'not_a_key_0123456789')]),
    ).toEqual([200, 401, 401]);
    expect(await statuses([get('/integrations'), get('/integrations', null)])).toEqual([200, 401]);

    const made = await send('POST', '/api-keys', { nombre: 'Contrato', alcances: ['sales:read'] });
    expect(made.status).toBe(201);
    const madeKey = (await json(made)).data as { id: number; key: string };
    expect(
      await statuses([
        get('/api-keys'),
        send('POST', '/api-keys', { nombre: 'x', alcances: ['ventas:todo'] }),
        get('/inventory', madeKey.key),
        send('POST', `/api-keys/${madeKey.id}/rotate`, { gracia_segundos: 0 }),
        send('POST', '/api-keys/999999/rotate', {}),
      ]),
    ).toEqual([200, 422, 403, 201, 404]);
    const last = (await json(await get('/api-keys'))).data.at(-1) as { id: number };
    expect(
      await statuses([stack.api(`${API}/api-keys/${last.id}`, { key: SALES_KEY_A, method: 'DELETE' }), get('/sales', madeKey.key)]),
    ).toEqual([200, 401]);
    expect(
      await statuses([get('/branches'), get('/document-types'), get('/channels'), get('/customers?q=a'), get('/customers?per_page=0')]),
    ).toEqual([200, 200, 200, 200, 400]);
    const etag = (await get('/channels')).headers.get('etag')!;
    expect((await stack.api(`${API}/channels`, { key: SALES_KEY_A, headers: { 'If-None-Match': etag } })).status).toBe(304);
    expect(await statuses([get('/openapi.json', null), get('/openapi-webhooks.json', null), get('/docs', null)])).toEqual([200, 200, 200]);
    expect((await stack.api(`${API}/sales`, { key: SALES_KEY_A, method: 'DELETE' })).status).toBe(405);
    const webhooks = [
      '/woocommerce/unknown_token_0123456789',
      '/woocommerce/unknown_token_0123456789/producto',
      '/shopify/unknown_token_0123456789',
    ].map((path) =>
      stack.api(`/api/webhook${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"id": 1}' }),
    );
    expect(await statuses(webhooks)).toEqual([401, 401, 401]);
    // A token longer than any integration's is refused before it is looked up.
    const token = 't'.repeat(501);
    const tooLongToken = [`/woocommerce/${token}`, `/woocommerce/${token}/producto`, `/shopify/${token}`].map((path) =>
      stack.api(`/api/webhook${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"id": 1}' }),
    );
    expect(await statuses(tooLongToken)).toEqual([422, 422, 422]);

    const verdicts = await stack.recorder!.verdicts();
    expect(
      verdicts.filter((v) => v.problems.length > 0).map((v) => `${v.operation} ${v.exchange.status}: ${v.problems.join('; ')}`),
    ).toEqual([]);
    // Every operation of the document was answered at least once.
    const seen = new Set(verdicts.map((v) => v.operation));
    expect(contract.operations().filter((op) => !seen.has(op))).toEqual([]);
  });

  describe('the check itself', () => {
    const ok: Exchange = {
      method: 'GET',
      url: `${API_BASE}/system/rate-limit`,
      status: 200,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': 'r1',
        'x-ratelimit-limit': '1000',
        'x-ratelimit-remaining': '999',
        'x-ratelimit-reset': '1767229200',
        etag: '"mwoJka0En9sN6UoWXiWqRlBsXI30zRk1MoPowFXdQSs"',
      },
      body: JSON.stringify({
        success: true,
        data: {
          requests_used: 1,
          max_requests: 1000,
          remaining_requests: 999,
          reset_time: '2026-01-01T01:00:00.000Z',
          window_minutes: 60,
          limits: { standard: 1000, with_date_filters: 2000 },
          current_limit_type: 'standard',
          empresa_id: 1,
          empresa_nombre: 'Empresa A',
          alcances: ['sales:write'],
          expira_el: null,
        },
        meta: { empresa: 'Empresa A', timestamp: '2026-01-01T00:00:00.000Z', filters_applied: {} },
      }),
    };
    const problems = (change: (e: Exchange) => Exchange) => contract.check(change(structuredClone(ok))).problems;
    const editBody = (e: Exchange, edit: (body: { data: Record<string, unknown> }) => void) => {
      const body = JSON.parse(e.body);
      edit(body);
      return { ...e, body: JSON.stringify(body) };
    };

    it('accepts a conforming answer', () => {
      expect(problems((e) => e)).toEqual([]);
    });

    it('flags an undeclared status, a missing or undeclared header, and a body that drifted', () => {
      expect(problems((e) => ({ ...e, status: 409 }))).toEqual(['status 409 is not declared']);
      expect(problems((e) => ({ ...e, headers: { ...e.headers, 'x-ratelimit-remaining': undefined as unknown as string } }))).toEqual([
        'header x-ratelimit-remaining is required and missing',
      ]);
      expect(problems((e) => ({ ...e, headers: { ...e.headers, 'x-debug': 'yes' } }))).toEqual(['header x-debug is not declared']);
      expect(problems((e) => editBody(e, (b) => (b.data.max_requests = '1000')))).toEqual([
        expect.stringContaining('/data/max_requests must be integer'),
      ]);
      expect(problems((e) => editBody(e, (b) => (b.data.extra = 1)))).toEqual([
        expect.stringContaining('must NOT have additional properties'),
      ]);
      expect(problems((e) => editBody(e, (b) => delete b.data.empresa_id))).toEqual([
        expect.stringContaining("must have required property 'empresa_id'"),
      ]);
    });

    it('ignores paths outside the document and checks the 405 of a method a path lacks', () => {
      const unknown = contract.check({ ...ok, url: `${API_BASE}/nothing-here`, status: 404 });
      expect([unknown.operation, unknown.problems]).toEqual([undefined, []]);
      expect(contract.check({ ...ok, method: 'DELETE', status: 200 }).problems).toEqual(
        expect.arrayContaining(['undocumented method answered 200, not 405']),
      );
    });
  });
});
