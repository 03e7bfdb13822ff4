import createClient from 'openapi-fetch';
import type { WebhookToken } from '@erp/back-office';
import type { paths } from '../../libs/client/src/openapi';
import type { paths as webhookPaths } from '../../libs/client/src/openapi-webhooks';
import { SALES_KEY_A, refsOf, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { Stack } from '../support/stack';

/** A shop with integrations without secret, so a delivery needs no signature. */
function shopFixture(): unknown {
  return {
    empresas: [
      {
        ref: 'tienda',
        nombre: 'Tienda en Línea S.A.',
        usuarios: [{ ref: 'admin', nombre: 'Admin Tienda', rol: 'Administrador' }],
        api_keys: [{ ref: 'main', usuario: 'admin', key: 'test_key_openapi_fetch_0123456789ab' }],
        sucursales: [{ ref: 'centro', nombre: 'Sucursal Centro', bodegas: [{ ref: 'principal', nombre: 'Bodega Principal' }] }],
        productos: [
          {
            ref: 'pA',
            nombre: 'Producto A',
            codigo: 'SKU-A',
            tipo: 'Producto',
            precio: 10,
            enable: 1,
            inventarios: [{ bodega: 'principal', stock: 5 }],
          },
        ],
        integraciones: [
          { ref: 'woo', plataforma: 'woocommerce', usuario: 'admin', sucursal: 'centro', bodega: 'principal', documento: 'factura' },
          { ref: 'shop', plataforma: 'shopify', usuario: 'admin', sucursal: 'centro', bodega: 'principal', documento: 'factura' },
        ],
      },
    ],
  };
}

/**
 * A generic typed client, as a partner would build one from the served documents alone: types by
 * openapi-typescript, calls by openapi-fetch, every endpoint of both documents, no cast.
 */
describe('openapi-fetch with openapi-typescript types', () => {
  let stack: Stack;
  let a: SalesRefs;
  let tokens: Record<string, WebhookToken>;

  beforeAll(async () => {
    stack = await Stack.start();
    a = refsOf(await stack.seed(salesFixture()), 'a');
    tokens = (await stack.seed(shopFixture())).empresas.tienda!.integraciones as Record<string, WebhookToken>;
  });
  afterAll(() => stack?.stop());

  const api = () =>
    createClient<paths>({
      baseUrl: `${stack.baseUrl}/api/external/v1`,
      headers: { Authorization: `Bearer ${SALES_KEY_A}` },
      fetch: stack.fetch,
    });
  const webhooks = () => createClient<webhookPaths>({ baseUrl: `${stack.baseUrl}/api/webhook`, fetch: stack.fetch });

  it('reads inventory with typed query parameters: booleans, integers, exact enums', async () => {
    const list = await api().GET('/inventory', { params: { query: { con_stock: true, enable: 1, order_direction: 'desc', per_page: 2 } } });
    expect(list.response.status).toBe(200);
    expect(list.data?.data.length).toBeGreaterThan(0);
    expect(list.data?.data.every((p) => p.enable === 1)).toBe(true);

    const summary = await api().GET('/inventory/summary');
    expect(summary.data?.success).toBe(true);

    const product = await api().GET('/inventory/{id}', { params: { path: { id: a.productos.laptop! } } });
    expect(product.data?.data.codigo).toBe('LAP-14');
  });

  it('creates, reads and updates sales, and reads them back in lists and summaries', async () => {
    const created = await api().POST('/sales', {
      body: {
        referencia_externa: 'openapi-fetch-1',
        fecha: '2026-03-10',
        estado: 'Cotizacion',
        id_sucursal: a.sucursales.centro!,
        id_bodega: a.bodegas.principal!,
        id_documento: a.documentos.cotizacion!,
        detalles: [{ codigo_producto: 'MOU-01', cantidad: 2.5, precio: 19.95 }],
      },
    });
    expect(created.response.status).toBe(201);
    const venta = created.data!.data;
    expect(created.response.headers.get('location')).toBe(`/api/external/v1/sales/${venta.id}`);

    const lote = await api().POST('/sales/batch', {
      params: { header: { 'Idempotency-Key': 'openapi-fetch-lote-1' } },
      body: {
        ventas: [
          {
            referencia_externa: 'openapi-fetch-2',
            fecha: '2026-03-10',
            estado: 'Cotizacion',
            id_sucursal: a.sucursales.centro!,
            id_bodega: a.bodegas.principal!,
            id_documento: a.documentos.cotizacion!,
            detalles: [{ codigo_producto: 'MOU-01', cantidad: 1 }],
          },
        ],
      },
    });
    expect([
      lote.data?.data.creadas,
      lote.data?.data.resultados[0]?.status,
      lote.data?.data.resultados[0]?.data?.referencia_externa,
    ]).toEqual([1, 201, 'openapi-fetch-2']);

    const updated = await api().PUT('/sales/{id}', {
      params: { path: { id: venta.id } },
      body: { observaciones: 'Entrega el lunes', detalles: [{ id: venta.detalles[0]!.id, cantidad: 3 }] },
    });
    expect(updated.data?.data.observaciones).toBe('Entrega el lunes');

    const read = await api().GET('/sales/{id}', { params: { path: { id: venta.id } } });
    expect(read.data?.data.detalles[0]?.cantidad).toBe(3);
    const list = await api().GET('/sales', { params: { query: { estado: 'Cotizacion', order_by: 'fecha', order_direction: 'asc' } } });
    expect(list.data?.data.map((v) => v.id)).toContain(venta.id);
    const summary = await api().GET('/sales/summary', { params: { query: { fecha_inicio: '2026-01-01', fecha_fin: '2026-12-31' } } });
    expect(summary.data?.data.cantidad_ventas).toBeGreaterThan(0);
  });

  it('reads returns, and gets a typed error envelope for an id that does not exist', async () => {
    const list = await api().GET('/returns', { params: { query: { fecha_inicio: '2026-01-01', per_page: 5 } } });
    expect(list.data?.pagination.per_page).toBe(5);
    const summary = await api().GET('/returns/summary');
    expect(summary.data?.success).toBe(true);
    const missing = await api().GET('/returns/{id}', { params: { path: { id: 999_999 } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ success: false, error: expect.any(String), code: 404, reason: 'devolucion_no_encontrada' });
  });

  it('imports packages, reads the quota, and fetches the reference', async () => {
    const imported = await api().POST('/packages/import', {
      body: {
        packages: [
          {
            cliente: 'Cliente',
            codigo_asesor: 'A1',
            wr: 'WR-FETCH-1',
            guia: 'G1',
            embalaje: 'Caja',
            piezas: 1,
            peso: 2.5,
            precio: 10,
            cuenta_a_terceros: 0,
            otros: 0,
            total: 10,
            sucursal: 'Sucursal Centro',
          },
        ],
      },
    });
    expect(imported.data?.created).toBe(1);

    const quota = await api().GET('/system/rate-limit');
    expect(quota.data?.data.max_requests).toBe(1000);

    const document = await api().GET('/openapi.json');
    expect(document.data).toEqual(expect.objectContaining({ openapi: '3.1.0' }));
    const webhooksDocument = await api().GET('/openapi-webhooks.json');
    expect(webhooksDocument.data).toEqual(expect.objectContaining({ servers: [expect.objectContaining({ url: '/api/webhook' })] }));
    const page = await api().GET('/docs', { parseAs: 'text' });
    expect(page.data).toContain('<!doctype html>');
  });

  it('delivers platform webhooks through their own document', async () => {
    const woo = await webhooks().POST('/woocommerce/{token}', {
      params: { path: { token: tokens.woo!.token } },
      headers: { 'X-WC-Webhook-Topic': 'order.created' },
      body: {
        id: 9001,
        status: 'processing',
        billing: { first_name: 'Ana', last_name: 'López', email: 'ana@example.com' },
        line_items: [{ product_id: 1, sku: 'SKU-A', name: 'Producto A', quantity: 1, total: '10.00' }],
        total: '10.00',
        payment_method: 'bacs',
      },
    });
    expect(woo.response.status).toBe(200);
    expect(woo.data?.success).toBe(true);

    const product = await webhooks().POST('/woocommerce/{token}/producto', {
      params: { path: { token: tokens.woo!.token } },
      headers: { 'X-WC-Webhook-Topic': 'product.updated' },
      body: { id: 4001, name: 'Producto A', sku: 'SKU-A', status: 'publish', manage_stock: true, stock_quantity: 7 },
    });
    expect(product.data?.success).toBe(true);

    const shop = await webhooks().POST('/shopify/{token}', {
      params: { path: { token: tokens.shop!.token } },
      headers: { 'X-Shopify-Topic': 'orders/create' },
      body: {
        id: 820982911946154,
        email: 'ana@example.com',
        financial_status: 'paid',
        line_items: [{ id: 1, sku: 'SKU-A', title: 'Producto A', quantity: 1, price: '10.00' }],
        total_price: '10.00',
        gateway: 'manual',
      },
    });
    expect(shop.data?.success).toBe(true);

    const unknown = await webhooks().POST('/shopify/{token}', {
      params: { path: { token: 'wh_no_such_token_000000000' } },
      body: { id: 1, email: 'x@example.com', financial_status: 'paid', line_items: [], total_price: '0', gateway: 'manual' },
    });
    expect(unknown.response.status).toBe(401);
    expect(unknown.error?.code).toBe(401);
  });
});
