import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { eventually } from '@erp/testing';
import { Stack } from '../support/stack';
import { webhookStore } from '../support/webhook-fixture';
import { startShops } from '../support/shops';

const KEY = 'test_key_shop_simulator_0123456789ab';
const WOO_SECRET = 'wc_secret_simulator_4f2a';
const SHOPIFY_SECRET = 'shpss_simulator_9c1e';

/**
 * The shop simulator's webhooks, signed as the platforms sign them, go through the real gateway
 * and webhook-ingest and become sales to the cent; one signed with another secret is refused.
 */
describe('shop simulator webhooks through the stack', () => {
  let stack: Stack;
  let shops: Awaited<ReturnType<typeof startShops>>;
  let integ: Record<string, WebhookToken>;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'webhook-ingest'] });
    const seeded: SeedOutput = await stack.seed(
      webhookStore({
        nombre: 'Tienda Simulada S.A.',
        key: KEY,
        vender_sin_stock: true,
        productos: [
          {
            ref: 'mouse',
            nombre: 'Mouse',
            codigo: 'MOU-01',
            tipo: 'Producto',
            precio: 19.99,
            enable: 1,
            inventarios: [{ bodega: 'principal', stock: 50 }],
          },
          {
            ref: 'teclado',
            nombre: 'Teclado',
            codigo: 'KEY-02',
            tipo: 'Producto',
            precio: 45.5,
            enable: 1,
            inventarios: [{ bodega: 'principal', stock: 50 }],
          },
        ],
        integraciones: [
          { ref: 'woo', plataforma: 'woocommerce', secreto: WOO_SECRET },
          { ref: 'shop', plataforma: 'shopify', secreto: SHOPIFY_SECRET },
        ],
      }),
    );
    integ = seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>;
    shops = await startShops({ shopify: { apiSecret: SHOPIFY_SECRET } });
  });
  afterAll(async () => {
    await shops?.close();
    await stack?.stop();
  });

  const saleOf = async (referencia: string) =>
    eventually(async () => {
      const rows = await stack.query<{ id: number; estado: string; total: string }>(
        'select id, estado, total::text as total from sales.ventas where referencia_externa = $1',
        [referencia],
      );
      expect(rows).toHaveLength(1);
      return rows[0]!;
    }, 30_000);

  it('a WooCommerce order, then its cancellation, become a sale to the cent and its annulment', async () => {
    shops.woo.addWebhook({ topic: 'order.created', delivery_url: `${stack.baseUrl}${integ.woo!.path}`, secret: WOO_SECRET });
    shops.woo.addWebhook({ topic: 'order.updated', delivery_url: `${stack.baseUrl}${integ.woo!.path}`, secret: WOO_SECRET });
    const order = shops.woo.createOrder({
      lines: [
        { sku: 'MOU-01', quantity: 3, price: '19.99' },
        { sku: 'KEY-02', quantity: 1, price: '45.50', tax: '5.92' },
      ],
      shipping: '4.25',
    });
    await shops.woo.settled();
    expect(shops.woo.deliveries.map((d) => d.status)).toEqual([200]);
    expect(Number((await saleOf(`woo-${String(order.id)}`)).total)).toBeCloseTo(115.64, 2);

    shops.woo.advanceClock(2000);
    shops.woo.cancelOrder(order.id as number);
    await shops.woo.settled();
    await eventually(async () => expect((await saleOf(`woo-${String(order.id)}`)).estado).toBe('Anulada'), 30_000);
  });

  it('a Shopify order becomes a sale to the cent; a delivery signed with another secret is refused and retried', async () => {
    shops.shopify.addSubscription({ topic: 'ORDERS_CREATE', uri: `${stack.baseUrl}${integ.shop!.path}` });
    const order = shops.shopify.createOrder({ lines: [{ sku: 'MOU-01', quantity: 2, price: '19.99' }], shipping: '3.10' });
    await shops.shopify.settled();
    expect(shops.shopify.deliveries.map((d) => d.status)).toEqual([200]);
    expect(Number((await saleOf(`shop-${String(order.id)}`)).total)).toBeCloseTo(43.08, 2);

    const other = await startShops({ shopify: { apiSecret: 'not-the-integration-secret', retryScheduleMs: [5] } });
    try {
      other.shopify.addSubscription({ topic: 'ORDERS_CREATE', uri: `${stack.baseUrl}${integ.shop!.path}` });
      other.shopify.createOrder({ lines: [{ sku: 'MOU-01', quantity: 1 }] });
      await other.shopify.settled();
      expect(other.shopify.deliveries.map((d) => d.status)).toEqual([401, 401]);
    } finally {
      await other.close();
    }
  });
});
