import { randomBytes } from 'node:crypto';
import tls from 'node:tls';
import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { webhookSubjects } from '@erp/contracts';
import { eventually } from '@erp/testing';
import { Stack } from '../support/stack';
import { webhookStore } from '../support/webhook-fixture';
import { startShops, testCa } from '../support/shops';

const KEY = 'test_key_shop_reconcile_0123456789abc';
const WOO_SECRET = 'wc_secret_reconcile_7d1e';
const SHOPIFY_SECRET = 'shpss_reconcile_2b9f';

/**
 * Reconciliation against the shops' own APIs (the simulator over HTTPS, trusted through the test
 * CA as `NODE_EXTRA_CA_CERTS` would): orders whose webhooks never came become sales, once, to the
 * cent; refunds their returns, cancellations annulments; our subscriptions come back when a shop
 * disabled or deleted them; a shop refusing for its rate limit is waited for; and
 * `GET /integrations` shows it all without a secret.
 */
describe('shop reconciliation through the stack', () => {
  let stack: Stack;
  let shops: Awaited<ReturnType<typeof startShops>>;
  let integ: Record<string, WebhookToken>;
  let empresaId: number;
  const oldKey = `k1:${randomBytes(32).toString('base64')}`;
  const newKey = `k2:${randomBytes(32).toString('base64')}`;
  let keys = oldKey;

  beforeAll(async () => {
    tls.setDefaultCACertificates([...tls.getCACertificates('default'), testCa().caPem]);
    shops = await startShops({ shopify: { apiSecret: SHOPIFY_SECRET } });
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'returns', 'webhook-ingest'],
      webhookIngest: (s) => ({
        PLATFORM_CREDENTIALS_KEYS: keys,
        PLATFORM_WEBHOOK_BASE_URL: s.baseUrl,
        // Passes only when asked (`webhooks.admin.reconcile`), so each test sees what its own pass did.
        PLATFORM_RECONCILE_INTERVAL_MS: 3_600_000,
        PLATFORM_RECONCILE_OVERLAP_MS: 60_000,
      }),
    });
    const producto = (ref: string, codigo: string, precio: number) => ({
      ref,
      nombre: ref,
      codigo,
      tipo: 'Producto',
      precio,
      enable: 1,
      inventarios: [{ bodega: 'principal', stock: 500 }],
    });
    const seeded: SeedOutput = await stack.seed(
      webhookStore({
        nombre: 'Conciliada S.A.',
        key: KEY,
        vender_sin_stock: true,
        productos: [producto('mouse', 'MOU-01', 19.99), producto('teclado', 'KEY-02', 45.5)],
        integraciones: [
          {
            ref: 'woo',
            plataforma: 'woocommerce',
            secreto: WOO_SECRET,
            tienda: { url: shops.woo.url, clave: shops.woo.consumerKey, secreto: shops.woo.consumerSecret },
          },
          {
            ref: 'shop',
            plataforma: 'shopify',
            secreto: SHOPIFY_SECRET,
            tienda: { url: shops.shopify.url, token: shops.shopify.accessToken },
          },
        ],
      }),
    );
    integ = seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>;
    empresaId = seeded.empresas.tienda!.id;
  });
  afterAll(async () => {
    await stack?.stop();
    await shops?.close();
  });

  const reconcile = async (id?: number) =>
    stack.admin.request(
      webhookSubjects,
      'webhooks.admin.reconcile',
      id ? { id_integracion: id } : {},
      { requestId: 'test-reconcile' },
      { timeoutMs: 60_000 },
    );
  const sales = (referencia: string) =>
    stack.query<{ id: number; estado: string; total: string }>(
      'select id, estado, total::text as total from sales.ventas where empresa_id = $1 and referencia_externa = $2',
      [empresaId, referencia],
    );
  const saleSettled = (referencia: string, check: (s: { estado: string; total: string }) => void) =>
    eventually(async () => {
      const rows = await sales(referencia);
      expect(rows).toHaveLength(1);
      check(rows[0]!);
    }, 30_000);
  const origin = async (referencia: string) =>
    (
      await stack.query<{ origen: string }>('select origen from webhook_ingest.pedidos where empresa_id = $1 and referencia = $2', [
        empresaId,
        referencia,
      ])
    )[0]?.origen;

  it('the first pass subscribes our endpoint at both shops; orders taken before it became sales once, to the cent', async () => {
    const woo = shops.woo.createOrder({ lines: [{ sku: 'MOU-01', quantity: 3, price: '19.99' }], shipping: '4.25' });
    const shop = shops.shopify.createOrder({ lines: [{ sku: 'KEY-02', quantity: 2, price: '45.50' }], shipping: '3.10' });

    const passes = await reconcile();
    expect(passes.map((p) => [p.resultado, p.suscripcion, p.pedidos_nuevos])).toEqual([
      ['correcta', 'restaurada', 1],
      ['correcta', 'restaurada', 1],
    ]);
    expect([...shops.woo.webhooks.values()].map((w) => [w.topic, w.delivery_url, w.status])).toEqual([
      ['order.created', `${stack.baseUrl}${integ.woo!.path}`, 'active'],
      ['order.updated', `${stack.baseUrl}${integ.woo!.path}`, 'active'],
    ]);
    expect([...shops.shopify.subscriptions.values()].map((s) => s.topic).sort()).toEqual([
      'ORDERS_CREATE',
      'ORDERS_UPDATED',
      'REFUNDS_CREATE',
    ]);

    await saleSettled(`woo-${String(woo.id)}`, (s) => expect(s).toMatchObject({ estado: 'Completada', total: '64.22' }));
    await saleSettled(`shop-${String(shop.id)}`, (s) => expect(s).toMatchObject({ estado: 'Completada', total: '94.10' }));
    expect(await origin(`woo-${String(woo.id)}`)).toBe('conciliacion');

    // A second pass over the same orders stores nothing and makes no sale twice.
    const again = await reconcile();
    expect(again.map((p) => [p.resultado, p.suscripcion, p.pedidos_entregados])).toEqual([
      ['correcta', 'activa', 0],
      ['correcta', 'activa', 0],
    ]);
    expect(await sales(`woo-${String(woo.id)}`)).toHaveLength(1);
  });

  it('dropped webhooks, refunds and a cancellation: each order one sale, each refund its return, the cancellation an annulment', async () => {
    shops.woo.setFaults({ drop: 1 });
    shops.shopify.setFaults({ drop: 1 });
    const paid = shops.woo.createOrder({
      lines: [
        { sku: 'MOU-01', quantity: 2 },
        { sku: 'KEY-02', quantity: 1, price: '45.50' },
      ],
    });
    const cancelled = shops.woo.createOrder({ lines: [{ sku: 'MOU-01', quantity: 1, price: '19.99' }] });
    const refunded = shops.shopify.createOrder({ lines: [{ sku: 'MOU-01', quantity: 4, price: '19.99' }] });
    // More lines than a batched read takes, and than one read alone: read again, its lines page by page.
    const big = shops.shopify.createOrder({ lines: Array.from({ length: 70 }, () => ({ sku: 'KEY-02', quantity: 1, price: '45.50' })) });
    await reconcile();
    await saleSettled(`shop-${String(big.id)}`, (s) => expect(s.total).toBe('3185.00'));
    await saleSettled(`woo-${String(cancelled.id)}`, (s) => expect(s.estado).toBe('Completada'));
    await saleSettled(`shop-${String(refunded.id)}`, (s) => expect(s.total).toBe('79.96'));

    shops.woo.advanceClock(2_000);
    shops.shopify.advanceClock(2_000);
    shops.woo.refundOrder(paid.id as number, { lines: [{ sku: 'MOU-01', quantity: 1 }] });
    shops.woo.cancelOrder(cancelled.id as number);
    shops.shopify.refundOrder(refunded.id as string, { lines: [{ sku: 'MOU-01', quantity: 1, restockType: 'return' }] });
    const passes = await reconcile();
    expect(passes.every((p) => p.resultado === 'correcta')).toBe(true);

    await saleSettled(`woo-${String(cancelled.id)}`, (s) => expect(s.estado).toBe('Anulada'));
    await eventually(async () => {
      const returns = await stack.query<{ referencia: string; total: string }>(
        'select referencia, total::text as total from returns.devoluciones where empresa_id = $1 order by referencia',
        [empresaId],
      );
      expect(returns.map((r) => [r.referencia.replace(/-reembolso-.*/, ''), r.total])).toEqual([
        [`shop-${String(refunded.id)}`, '19.99'],
        [`woo-${String(paid.id)}`, expect.any(String) as string],
      ]);
    }, 30_000);
    expect(await sales(`woo-${String(paid.id)}`)).toHaveLength(1);
    shops.woo.setFaults({});
    shops.shopify.setFaults({});
  });

  it('a WooCommerce refund its webhook brought without lines becomes its return once reconciliation reads its lines', async () => {
    const order = shops.woo.createOrder({ lines: [{ sku: 'MOU-01', quantity: 3, price: '19.99' }] });
    await saleSettled(`woo-${String(order.id)}`, (s) => expect(s.total).toBe('59.97'));
    expect(await origin(`woo-${String(order.id)}`)).toBe('webhook');
    shops.woo.advanceClock(2_000);
    shops.woo.refundOrder(order.id as number, { lines: [{ sku: 'MOU-01', quantity: 1 }] });
    await shops.woo.settled();
    const returnsOf = () =>
      stack.query<{ total: string }>('select total::text as total from returns.devoluciones where empresa_id = $1 and referencia like $2', [
        empresaId,
        `woo-${String(order.id)}-reembolso-%`,
      ]);
    // The webhook's order carries the refund's amount only: nothing is booked from it.
    await eventually(async () => {
      const [row] = await stack.query<{ lineas_pendientes: boolean }>(
        'select lineas_pendientes from webhook_ingest.pedidos where empresa_id = $1 and referencia = $2',
        [empresaId, `woo-${String(order.id)}`],
      );
      expect(row?.lineas_pendientes).toBe(true);
    }, 30_000);
    expect(await returnsOf()).toEqual([]);

    await reconcile(integ.woo!.id);
    await eventually(async () => expect(await returnsOf()).toEqual([{ total: '19.99' }]), 30_000);
    await reconcile(integ.woo!.id);
    expect(await returnsOf()).toHaveLength(1);
  });

  it('an order cancelled within the second its sale was made in (its webhook lost) is annulled by reconciliation, at the same version', async () => {
    // WooCommerce dates count seconds, and the shop's clock is ours moved by whole seconds: both
    // changes fall in one second when they start just after one begins.
    await new Promise((r) => setTimeout(r, 1050 - (Date.now() % 1000)));
    const order = shops.woo.createOrder({ lines: [{ sku: 'MOU-01', quantity: 1, price: '19.99' }] });
    await shops.woo.settled();
    shops.woo.setFaults({ drop: 1 });
    shops.woo.cancelOrder(order.id as number);
    shops.woo.setFaults({});
    expect(shops.woo.orderJson(order.id as number).date_modified_gmt).toBe(order.date_modified_gmt);
    await saleSettled(`woo-${String(order.id)}`, (s) => expect(s.estado).toBe('Completada'));

    await reconcile(integ.woo!.id);
    await saleSettled(`woo-${String(order.id)}`, (s) => expect(s.estado).toBe('Anulada'));
  });

  it('restores a subscription the shop disabled or deleted, waits out a 429, and shows it in GET /integrations without a secret', async () => {
    for (const hook of shops.woo.webhooks.values()) if (hook.topic === 'order.updated') hook.status = 'disabled';
    const [created] = [...shops.shopify.subscriptions.values()].filter((s) => s.topic === 'ORDERS_CREATE');
    shops.shopify.subscriptions.delete(created!.id);
    shops.woo.failNext({ count: 2, status: 429, retryAfterSeconds: 1 });

    const passes = await reconcile();
    expect(passes.map((p) => [p.resultado, p.suscripcion])).toEqual([
      ['correcta', 'restaurada'],
      ['correcta', 'restaurada'],
    ]);
    expect(shops.woo.metrics.throttled).toBeGreaterThanOrEqual(2);
    expect([...shops.woo.webhooks.values()].every((w) => w.status === 'active')).toBe(true);
    expect([...shops.shopify.subscriptions.values()].some((s) => s.topic === 'ORDERS_CREATE')).toBe(true);

    const res = await stack.api('/api/external/v1/integrations', { key: KEY });
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const secret of [shops.woo.consumerKey, shops.woo.consumerSecret, shops.shopify.accessToken, WOO_SECRET, integ.woo!.token]) {
      expect(text).not.toContain(secret);
    }
    const data = (JSON.parse(text) as { data: Array<Record<string, unknown>> }).data;
    expect(data.map((i) => [i.plataforma, (i.suscripcion as { estado: string; restauraciones: number }).estado])).toEqual([
      ['woocommerce', 'restaurada'],
      ['shopify', 'restaurada'],
    ]);
    const woo = data[0] as {
      conciliacion: { resultado: string; pedidos_recuperados: number };
      webhooks_perdidos: { pedidos: number; recuperados: number; tasa: string };
    };
    expect(woo.conciliacion.resultado).toBe('correcta');
    expect(woo.conciliacion.pedidos_recuperados).toBeGreaterThanOrEqual(3);
    // Every WooCommerce order came by reconciliation but the two whose webhooks were let through.
    const { pedidos, recuperados, tasa } = woo.webhooks_perdidos;
    expect(pedidos - recuperados).toBe(2);
    expect(tasa).toBe((recuperados / pedidos).toFixed(4));
  });

  it('a shop that keeps failing fails its own pass only, and keeps its watermark', async () => {
    shops.woo.failNext({ count: 50, status: 500 });
    const before = await stack.query<{ marca: Date }>('select marca from webhook_ingest.conciliaciones where integracion_id = $1', [
      integ.woo!.id,
    ]);
    const order = shops.shopify.createOrder({ lines: [{ sku: 'KEY-02', quantity: 1, price: '45.50' }] });
    const passes = await reconcile();
    const woo = passes.find((p) => p.id_integracion === integ.woo!.id)!;
    expect(woo.resultado).toBe('fallida');
    expect(woo.error).toMatch(/WooCommerce orders/);
    expect(passes.find((p) => p.id_integracion === integ.shop!.id)!.resultado).toBe('correcta');
    await saleSettled(`shop-${String(order.id)}`, (s) => expect(s.total).toBe('45.50'));
    const after = await stack.query<{ marca: Date; error: string }>(
      'select marca, error from webhook_ingest.conciliaciones where integracion_id = $1',
      [integ.woo!.id],
    );
    expect(after[0]!.marca).toEqual(before[0]!.marca);
    shops.woo.failNext({ count: 0 });
  });

  it('two passes of one integration at once: one runs, the other finds it held', async () => {
    const [a, b] = await Promise.all([reconcile(integ.shop!.id), reconcile(integ.shop!.id)]);
    expect([a[0]!.resultado, b[0]!.resultado].sort()).toEqual(['correcta', 'ocupada']);
  });

  it('a rotated token moves our subscriptions to its new URL; a rotated key re-seals every credential, and the old key can go', async () => {
    const rotated = await stack.admin.request(
      webhookSubjects,
      'webhooks.admin.integration.rotate-token',
      { id: integ.woo!.id },
      { requestId: 't' },
    );
    await reconcile(integ.woo!.id);
    expect(
      [...shops.woo.webhooks.values()].filter((w) => w.delivery_url === `${stack.baseUrl}${rotated.path}`).map((w) => w.topic),
    ).toEqual(['order.created', 'order.updated']);

    keys = `${newKey},${oldKey}`;
    await stack.stopService('webhook-ingest');
    await stack.startService('webhook-ingest');
    const resealed = await stack.admin.request(webhookSubjects, 'webhooks.admin.credentials.reseal', {}, { requestId: 't' });
    expect(resealed).toEqual({ reselladas: 2, clave: 'k2' });
    keys = newKey;
    await stack.stopService('webhook-ingest');
    await stack.startService('webhook-ingest');
    expect((await reconcile()).map((p) => p.resultado)).toEqual(['correcta', 'correcta']);
  });
});
