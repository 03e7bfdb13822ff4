import { randomBytes } from 'node:crypto';
import tls from 'node:tls';
import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { webhookSubjects } from '@erp/contracts';
import { eventually } from '@erp/testing';
import { Stack } from '../support/stack';
import { webhookStore } from '../support/webhook-fixture';
import { startShops, testCa } from '../support/shops';

const KEY = 'test_key_shop_stock_0123456789abcdef';
const WOO_SECRET = 'wc_secret_stock_31ab';
const API = '/api/external/v1';

/**
 * Our stock pushed to the shops (the simulator over HTTPS): a partner's sale reaches both shops
 * within the push delay, less the integration's buffer; a burst of sales of one product is one or
 * two writes; Shopify's compare-and-set re-reads once when the shop's quantity moved; the shop's
 * echo of our own write changes nothing here; a failing shop is retried until it takes the value.
 */
describe('stock pushed to the shops through the stack', () => {
  let stack: Stack;
  let shops: Awaited<ReturnType<typeof startShops>>;
  let integ: Record<string, WebhookToken>;
  let refs: { sucursal: number; bodega: number; documento: number; canal: number; mouse: number; teclado: number; empresa: number };

  beforeAll(async () => {
    tls.setDefaultCACertificates([...tls.getCACertificates('default'), testCa().caPem]);
    shops = await startShops();
    shops.woo.addProduct({ sku: 'MOU-01', stock: 5 });
    const parent = shops.woo.addProduct({ sku: 'KEY', stock: null });
    shops.woo.addProduct({ sku: 'KEY-02', stock: 5, parentId: parent });
    shops.shopify.addVariant({ sku: 'MOU-01', stock: 5 });
    shops.shopify.addVariant({ sku: 'KEY-02', stock: 5 });
    // One keyring for every start of webhook-ingest: what it sealed stays readable after a restart.
    const keys = `k:${randomBytes(32).toString('base64')}`;
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'webhook-ingest'],
      webhookIngest: (s) => ({
        PLATFORM_CREDENTIALS_KEYS: keys,
        PLATFORM_WEBHOOK_BASE_URL: s.baseUrl,
        PLATFORM_RECONCILE_INTERVAL_MS: 3_600_000,
        PLATFORM_STOCK_PUSH_DELAY_MS: 400,
      }),
    });
    const producto = (ref: string, codigo: string, stock: number) => ({
      ref,
      nombre: ref,
      codigo,
      tipo: 'Producto',
      precio: 10,
      enable: 1,
      inventarios: [{ bodega: 'principal', stock }],
    });
    const seeded: SeedOutput = await stack.seed(
      webhookStore({
        nombre: 'Stock Compartido S.A.',
        key: KEY,
        vender_sin_stock: false,
        productos: [producto('mouse', 'MOU-01', 50), producto('teclado', 'KEY-02', 30)],
        integraciones: [
          {
            ref: 'woo',
            plataforma: 'woocommerce',
            secreto: WOO_SECRET,
            tienda: { url: shops.woo.url, clave: shops.woo.consumerKey, secreto: shops.woo.consumerSecret },
            stock_colchon: 2,
          } as never,
          { ref: 'shop', plataforma: 'shopify', tienda: { url: shops.shopify.url, token: shops.shopify.accessToken } },
        ],
      }),
    );
    const e = seeded.empresas.tienda!;
    integ = e.integraciones as Record<string, WebhookToken>;
    const map = (k: string) => e[k] as Record<string, number>;
    refs = {
      empresa: e.id,
      sucursal: map('sucursales').centro!,
      bodega: map('bodegas').principal!,
      documento: map('documentos').ticket!,
      canal: map('canales').web!,
      mouse: map('productos').mouse!,
      teclado: map('productos').teclado!,
    };
  });
  afterAll(async () => {
    await stack?.stop();
    await shops?.close();
  });

  const sell = async (producto: number, cantidad: number) => {
    const res = await stack.api(`${API}/sales`, {
      key: KEY,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        fecha: '2026-11-27',
        estado: 'Completada',
        id_sucursal: refs.sucursal,
        id_bodega: refs.bodega,
        id_documento: refs.documento,
        id_canal: refs.canal,
        detalles: [{ id_producto: producto, cantidad }],
      }),
    });
    expect(res.status).toBe(201);
  };
  const ours = async (producto: number) =>
    Number(
      (
        await stack.query<{ stock: string }>('select stock::text from inventory.inventarios where producto_id = $1 and bodega_id = $2', [
          producto,
          refs.bodega,
        ])
      )[0]!.stock,
    );
  const writesOf = (shop: 'woo' | 'shopify', sku: string) => shops[shop].stockWrites.filter((w) => w.sku === sku && w.applied).length;

  it('a partner sale reaches both shops within the delay: ours less the buffer at WooCommerce (a variation too), ours at Shopify', async () => {
    await sell(refs.mouse, 3);
    await sell(refs.teclado, 1);
    await eventually(async () => {
      expect(shops.woo.stockOf('MOU-01')).toBe(47 - 2);
      expect(shops.woo.stockOf('KEY-02')).toBe(29 - 2);
      expect(shops.shopify.stockOf('MOU-01')).toBe(47);
      expect(shops.shopify.stockOf('KEY-02')).toBe(29);
    }, 15_000);
  });

  it('a burst of 20 sales of one product is a few writes per shop, ending at our stock', async () => {
    const before = { woo: writesOf('woo', 'MOU-01'), shopify: writesOf('shopify', 'MOU-01') };
    await Promise.all(Array.from({ length: 20 }, () => sell(refs.mouse, 1)));
    const stock = await ours(refs.mouse);
    expect(stock).toBe(27);
    await eventually(async () => {
      expect(shops.woo.stockOf('MOU-01')).toBe(stock - 2);
      expect(shops.shopify.stockOf('MOU-01')).toBe(stock);
    }, 15_000);
    expect(writesOf('woo', 'MOU-01') - before.woo).toBeLessThanOrEqual(4);
    expect(writesOf('shopify', 'MOU-01') - before.shopify).toBeLessThanOrEqual(4);
  });

  it("Shopify's compare-and-set: a quantity changed at the shop is read again once, and ours is written over it", async () => {
    shops.shopify.setStock('KEY-02', 99);
    await sell(refs.teclado, 1);
    await eventually(async () => expect(shops.shopify.stockOf('KEY-02')).toBe(28), 15_000);
    const key02 = shops.shopify.stockWrites.filter((w) => w.sku === 'KEY-02');
    expect(key02.at(-2)).toMatchObject({ applied: false, before: 99, after: 28 });
    expect(key02.at(-1)).toMatchObject({ applied: true, before: 99, after: 28 });
  });

  it("the shop's echo of our write (WooCommerce's product.updated) changes nothing of our stock", async () => {
    shops.woo.addWebhook({ topic: 'product.updated', delivery_url: `${stack.baseUrl}${integ.woo!.path}/producto`, secret: WOO_SECRET });
    await sell(refs.mouse, 1);
    await eventually(async () => expect(shops.woo.stockOf('MOU-01')).toBe(26 - 2), 15_000);
    await shops.woo.settled();
    expect(shops.woo.deliveries.filter((d) => d.topic === 'product.updated').map((d) => d.status)).toContain(200);
    await eventually(async () => {
      const rows = await stack.query<{ n: number }>(
        "select count(*)::int as n from webhook_ingest.entregas where recurso = 'producto' and estado <> 'recibida'",
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
    }, 15_000);
    expect(await ours(refs.mouse)).toBe(26);
  });

  it('a shop failing is retried until it takes the value; a restart of webhook-ingest loses nothing owed; GET /integrations shows the stock side', async () => {
    shops.woo.failNext({ count: 3, status: 500 });
    await stack.stopService('webhook-ingest');
    await sell(refs.mouse, 2);
    await stack.startService('webhook-ingest');
    await eventually(async () => {
      expect(shops.woo.stockOf('MOU-01')).toBe(24 - 2);
      expect(shops.shopify.stockOf('MOU-01')).toBe(24);
    }, 30_000);

    const res = await stack.api(`${API}/integrations`, { key: KEY });
    expect(res.status).toBe(200);
    const [woo] = ((await res.json()) as { data: Array<{ stock: Record<string, unknown> }> }).data;
    expect(woo!.stock).toMatchObject({
      sincronizar: true,
      colchon: 2,
      productos_mapeados: 2,
      skus_sin_mapear: 0,
      pendientes: 0,
      fallando: 0,
    });
    expect((woo!.stock.retraso_ms as { p99: number }).p99).toBeGreaterThanOrEqual(400);
  });

  it('the drift check finds stock changed at the shop, a SKU that is not ours and an order whose webhook was lost; --repair puts them right', async () => {
    const drift = (reparar: boolean) =>
      stack.admin.request(webhookSubjects, 'webhooks.admin.drift', { reparar }, { requestId: 'drift' }, { timeoutMs: 60_000 });
    shops.woo.setStock('MOU-01', 77);
    shops.shopify.setStock('KEY-02', 3);
    shops.woo.addProduct({ sku: 'GHOST-1', stock: 4 });
    shops.woo.setFaults({ drop: 1 });
    const order = shops.woo.createOrder({ lines: [{ sku: 'KEY-02', quantity: 1, price: '10.00' }] });
    shops.woo.setFaults({});

    const found = await drift(false);
    expect(
      found.map((d) => [d.id_integracion, d.resultado, d.stock_distinto.map((x) => x.codigo), d.skus_sin_producto, d.pedidos_pendientes]),
    ).toEqual([
      [integ.woo!.id, 'revisada', ['KEY-02', 'MOU-01'], ['GHOST-1'], [`woo-${String(order.id)}`]],
      [integ.shop!.id, 'revisada', ['KEY-02'], [], []],
    ]);
    expect(found[0]!.stock_distinto[1]).toEqual({ codigo: 'MOU-01', tienda: 77, esperado: (await ours(refs.mouse)) - 2 });

    await drift(true);
    await eventually(async () => {
      expect(
        await stack.query('select 1 from sales.ventas where empresa_id = $1 and referencia_externa = $2', [
          refs.empresa,
          `woo-${String(order.id)}`,
        ]),
      ).toHaveLength(1);
      const teclado = await ours(refs.teclado);
      expect(shops.woo.stockOf('MOU-01')).toBe((await ours(refs.mouse)) - 2);
      expect(shops.woo.stockOf('KEY-02')).toBe(teclado - 2);
      expect(shops.shopify.stockOf('KEY-02')).toBe(teclado);
    }, 30_000);
    const after = await drift(false);
    expect(after.map((d) => [d.stock_distinto, d.pedidos_pendientes])).toEqual([
      [[], []],
      [[], []],
    ]);
  });
});
