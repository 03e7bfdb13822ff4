import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { Stack, json } from '../support/stack';
import { deliver } from '../support/webhook-fixture';
import { shopifyHeaders, shopifyOrderBody, wooHeaders, wooPing, wooProduct } from '../../services/webhook-ingest/test/platform.factories';

const WOO_SECRET = 'wc_secret_5f1b9c3e7a2d';
const SHOP_SECRET = 'shpss_8a2c4e6f0b1d3e5f';
const KEY = 'test_key_webhooks_0123456789abcdef';

function fixture(): unknown {
  return {
    empresas: [
      {
        ref: 'tienda',
        nombre: 'Tienda en Línea S.A.',
        usuarios: [{ ref: 'admin', nombre: 'Admin Tienda', rol: 'Administrador' }],
        api_keys: [{ ref: 'main', usuario: 'admin', key: KEY }],
        sucursales: [{ ref: 'centro', nombre: 'Sucursal Centro', bodegas: [{ ref: 'principal', nombre: 'Bodega Principal' }] }],
        productos: ['A', 'B', 'C', 'D'].map((x, i) => ({
          ref: `p${x}`,
          nombre: `Producto ${x}`,
          codigo: `SKU-${x}`,
          tipo: 'Producto',
          precio: 10 + i,
          enable: 1,
          inventarios: [{ bodega: 'principal', stock: 5 }],
        })),
        integraciones: [
          {
            ref: 'woo',
            plataforma: 'woocommerce',
            usuario: 'admin',
            sucursal: 'centro',
            bodega: 'principal',
            documento: 'factura',
            secreto: WOO_SECRET,
          },
          { ref: 'woo_libre', plataforma: 'woocommerce', usuario: 'admin', sucursal: 'centro', bodega: 'principal', documento: 'factura' },
          {
            ref: 'shop',
            plataforma: 'shopify',
            usuario: 'admin',
            sucursal: 'centro',
            bodega: 'principal',
            documento: 'factura',
            secreto: SHOP_SECRET,
          },
        ],
      },
    ],
  };
}

describe('inbound webhooks through the gateway', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let integ: Record<string, WebhookToken>;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'webhook-ingest'] });
    seeded = await stack.seed(fixture());
    integ = seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>;
  });
  afterAll(async () => {
    await stack.stop();
  });

  const producto = (x: string) => (seeded.empresas.tienda!.productos as Record<string, number>)[`p${x}`]!;
  const stockOf = async (x: string) => {
    const res = await stack.api(`/api/external/v1/inventory/${producto(x)}`, { key: KEY });
    return (await json(res)).data.inventarios[0].stock as number;
  };
  const entregas = () =>
    stack.query<{ id: number; estado: string; motivo: string | null }>(
      'select id, estado, motivo from webhook_ingest.entregas order by id',
    );
  const waitFor = async (check: () => Promise<boolean>, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > until) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('prints every token once with its path, and stores none in clear', async () => {
    expect(integ.woo!.path).toBe(`/api/webhook/woocommerce/${integ.woo!.token}`);
    expect(integ.shop!.path).toBe(`/api/webhook/shopify/${integ.shop!.token}`);
    const stored = await stack.query('select * from webhook_ingest.integraciones');
    expect(JSON.stringify(stored)).not.toContain(integ.woo!.token);
  });

  it('answers 401 to an unknown token, with neither API key nor quota involved', async () => {
    const body = JSON.stringify({ id: 1 });
    const res = await deliver(
      stack.baseUrl,
      '/api/webhook/woocommerce/wh_no_such_token_000000000',
      body,
      wooHeaders(body, 'order.created'),
    );
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({
      success: false,
      error: 'Token de integración inválido o deshabilitado',
      code: 401,
      reason: 'token_invalido',
    });
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('answers WooCommerce’s ping (form body, unsigned) with 200 and stores nothing', async () => {
    const ping = wooPing(31);
    const res = await deliver(stack.baseUrl, integ.woo!.path, ping.body, ping.headers);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true, estado: 'ping', id_entrega: null });
    expect(await entregas()).toEqual([]);
  });

  it('checks signatures over the raw body: good 200, bad or missing 401; unsigned integrations need none', async () => {
    const body = JSON.stringify(
      wooProduct({ id: 4001, name: 'Producto A', sku: 'SKU-A', regular_price: '10.00', stock_quantity: 9 }),
      null,
      1,
    );
    const bad = await deliver(stack.baseUrl, `${integ.woo!.path}/producto`, body, wooHeaders(body, 'product.updated', 'not-the-secret'));
    expect(bad.status).toBe(401);
    expect((await json(bad)).error).toBe('Firma del webhook inválida o ausente');
    expect((await deliver(stack.baseUrl, `${integ.woo!.path}/producto`, body, wooHeaders(body, 'product.updated'))).status).toBe(401);
    // Re-serialising the JSON changes the bytes: the signature of the pretty body no longer matches.
    const compact = JSON.stringify(JSON.parse(body));
    expect(
      (await deliver(stack.baseUrl, `${integ.woo!.path}/producto`, compact, wooHeaders(body, 'product.updated', WOO_SECRET))).status,
    ).toBe(401);
    expect(await entregas()).toEqual([]);

    const good = await deliver(stack.baseUrl, `${integ.woo!.path}/producto`, body, wooHeaders(body, 'product.updated', WOO_SECRET));
    expect(good.status).toBe(200);
    expect(await json(good)).toEqual({ success: true, estado: 'recibida', id_entrega: expect.any(Number) });
    const unsigned = JSON.stringify(wooProduct({ id: 4002, name: 'Producto B', sku: 'SKU-B', regular_price: '11.00', stock_quantity: 6 }));
    expect(
      (await deliver(stack.baseUrl, `${integ.woo_libre!.path}/producto`, unsigned, wooHeaders(unsigned, 'product.updated'))).status,
    ).toBe(200);

    // Same name, price and state as our catalog: only the stock changes, absolutely, in the integration's warehouse.
    await waitFor(async () => (await stockOf('A')) === 9 && (await stockOf('B')) === 6);
    expect((await entregas()).map((e) => e.estado)).toEqual(['procesada', 'procesada']);
  });

  it('updates name, price and state of mapped products, creates unknown SKUs, and disables deleted products', async () => {
    const send = async (payload: unknown, topic: string) => {
      const body = JSON.stringify(payload);
      const res = await deliver(stack.baseUrl, `${integ.woo_libre!.path}/producto`, body, wooHeaders(body, topic));
      const { id_entrega } = await json(res);
      await waitFor(
        async () => (await stack.query('select estado from webhook_ingest.entregas where id = $1', [id_entrega]))[0]!.estado !== 'recibida',
      );
      return (await stack.query('select estado, motivo from webhook_ingest.entregas where id = $1', [id_entrega]))[0];
    };
    const product = async (id: number) => (await json(await stack.api(`/api/external/v1/inventory/${id}`, { key: KEY }))).data;

    const renamed = wooProduct({
      id: 4001,
      name: 'Producto A Plus',
      sku: 'SKU-A',
      regular_price: '10.00',
      sale_price: '8.50',
      stock_quantity: 9,
      date_modified_gmt: '2026-03-13T10:00:00',
    });
    expect(await send(renamed, 'product.updated')).toEqual({ estado: 'procesada', motivo: null });
    expect(await product(producto('A'))).toMatchObject({ nombre: 'Producto A Plus', precio: 8.5, enable: 1 });

    const nuevo = wooProduct({ id: 4200, name: 'Gorra bordada', sku: 'GOR-01', regular_price: '15.00', stock_quantity: 7 });
    expect(await send(nuevo, 'product.created')).toMatchObject({ estado: 'procesada' });
    const [mapping] = await stack.query<{ producto_id: number }>(
      "select producto_id from webhook_ingest.mapeos_producto where id_externo = '4200'",
    );
    expect(await product(mapping!.producto_id)).toMatchObject({
      codigo: 'GOR-01',
      nombre: 'Gorra bordada',
      precio: 15,
      enable: 1,
      inventarios: [expect.objectContaining({ stock: 7 })],
    });

    expect(await send({ id: 4200 }, 'product.deleted')).toMatchObject({ estado: 'procesada' });
    expect(await product(mapping!.producto_id)).toMatchObject({ enable: 0 });
  });

  it('answers a Shopify order 401 without its HMAC, and acknowledges non-order topics without storing them', async () => {
    const order = shopifyOrderBody({
      id: '820982911946154508',
      financial_status: 'paid',
      line_items: [
        {
          id: '866550311766439020',
          product_id: '632910392',
          variant_id: '808950810',
          sku: 'SKU-A',
          title: 'Producto A',
          quantity: 1,
          price: '10.00',
        },
      ],
    });
    expect((await deliver(stack.baseUrl, integ.shop!.path, order, shopifyHeaders(order, 'orders/create'))).status).toBe(401);
    const before = (await entregas()).length;
    const product = JSON.stringify({ id: 632910392, title: 'Producto A', status: 'active' });
    const res = await deliver(stack.baseUrl, integ.shop!.path, product, shopifyHeaders(product, 'products/update', SHOP_SECRET));
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true, estado: 'ignorada', id_entrega: null });
    expect((await entregas()).length).toBe(before);
  });

  it('answers 405 to other methods and 404 to unknown platforms', async () => {
    const get = await fetch(`${stack.baseUrl}${integ.woo!.path}`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const other = await fetch(`${stack.baseUrl}/api/webhook/magento/${integ.woo!.token}`, { method: 'POST', body: '{}' });
    expect(other.status).toBe(404);
  });

  it('answers 503 with Retry-After while the webhook service is down: nothing is stored, and the platform’s retry is', async () => {
    const body = JSON.stringify(wooProduct({ id: 4200, name: 'Producto B', sku: 'SKU-B', regular_price: '11.00', stock_quantity: 7 }));
    const send = () => deliver(stack.baseUrl, `${integ.woo!.path}/producto`, body, wooHeaders(body, 'product.updated', WOO_SECRET));
    const before = (await entregas()).length;
    await stack.stopService('webhook-ingest');
    try {
      const down = await send();
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBeTruthy();
      expect(await json(down)).toMatchObject({ success: false, code: 503, reason: 'servicio_no_disponible' });
      expect(await entregas()).toHaveLength(before);
    } finally {
      await stack.startService('webhook-ingest');
    }
    expect((await send()).status).toBe(200);
    await waitFor(async () => (await entregas()).length === before + 1 && (await entregas()).every((e) => e.estado !== 'recibida'));
    expect((await entregas()).at(-1)).toMatchObject({ estado: 'procesada' });
  });

  it('keeps answering 200 while inventory is down, and applies every delivery once it is back', async () => {
    await stack.stopService('inventory');
    const sent = await Promise.all(
      (['C', 'D'] as const).flatMap((x, i) =>
        [1, 2].map(async (attempt) => {
          const body = JSON.stringify(
            wooProduct({ id: 4100 + i, name: `Producto ${x}`, sku: `SKU-${x}`, regular_price: `${12 + i}.00`, stock_quantity: 20 + i }),
          );
          // WooCommerce retries with the same body and a new delivery id: the second attempt is a duplicate.
          void attempt;
          return deliver(stack.baseUrl, `${integ.woo!.path}/producto`, body, wooHeaders(body, 'product.updated', WOO_SECRET));
        }),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await new Promise((r) => setTimeout(r, 700));
    const waiting = await stack.query("select count(*)::int as n from webhook_ingest.entregas where estado = 'recibida'");
    expect(waiting[0]!.n).toBe(2);

    await stack.startService('inventory');
    await waitFor(
      async () => (await stack.query("select count(*)::int as n from webhook_ingest.entregas where estado = 'recibida'"))[0]!.n === 0,
    );
    expect(await stockOf('C')).toBe(20);
    expect(await stockOf('D')).toBe(21);
    const moves = await stack.query(
      "select count(*)::int as n from inventory.movimientos where origen = 'webhook' and producto_id = any($1)",
      [[producto('C'), producto('D')]],
    );
    expect(moves[0]!.n).toBe(2);
  });
});
