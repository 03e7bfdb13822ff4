import { Agent, get } from 'node:https';
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import { eventually } from '@erp/testing';
import { classify } from '../../../services/webhook-ingest/src/domain/classify';
import { planPedidoVenta, wooPedidoIntent } from '../../../services/webhook-ingest/src/domain/pedidos';
import { verifySignature } from '../../../services/webhook-ingest/src/domain/signature';
import { testCa } from './tls';
import { webhookReceiver } from './receiver';
import { WooShop } from './woocommerce';

type Json = Record<string, unknown>;

describe('WooCommerce shop simulator', () => {
  let shop: WooShop;
  let api: WooCommerceRestApi;

  beforeEach(async () => {
    shop = await WooShop.start();
    // WooCommerce's own client, over HTTPS, trusting only the test CA.
    api = new WooCommerceRestApi({
      url: shop.url,
      consumerKey: shop.consumerKey,
      consumerSecret: shop.consumerSecret,
      version: 'wc/v3',
      axiosConfig: { httpsAgent: new Agent({ ca: testCa().caPem }) },
    });
  });
  afterEach(() => shop.close());

  it('serves HTTPS with a certificate only the test CA vouches for', async () => {
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => {
      get(`${shop.url}/wp-json/wc/v3/orders`, () => resolve(new Error('answered without the CA'))).on('error', resolve);
    });
    expect(error.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
    const { status } = await api.get('orders');
    expect(status).toBe(200);
  });

  it('refuses a request without its consumer key and secret (401)', async () => {
    const wrong = new WooCommerceRestApi({
      url: shop.url,
      consumerKey: shop.consumerKey,
      consumerSecret: 'cs_wrong',
      version: 'wc/v3',
      axiosConfig: { httpsAgent: new Agent({ ca: testCa().caPem }) },
    });
    await expect(wrong.get('orders')).rejects.toMatchObject({
      response: { status: 401, data: { code: 'woocommerce_rest_authentication_error' } },
    });
    const bare = await fetchNoAuth(`${shop.url}/wp-json/wc/v3/orders`);
    expect(bare).toBe(401);
    expect(shop.metrics.unauthorized).toBe(2);
  });

  it('pages orders changed after a time by X-WP-TotalPages, oldest change first', async () => {
    const before = new Date(Date.now() - 2000).toISOString().slice(0, 19);
    const ids = Array.from(
      { length: 23 },
      (_, i) => shop.createOrder({ lines: [{ sku: `SKU-${i % 3}`, quantity: 1, price: '4.10' }] }).id as number,
    );
    shop.advanceClock(2000);
    shop.updateOrder(ids[0]!, { status: 'completed' });
    const seen: number[] = [];
    let pages = Infinity;
    for (let page = 1; page <= pages; page++) {
      const res = await api.get('orders', {
        modified_after: before,
        dates_are_gmt: 'true',
        orderby: 'modified',
        order: 'asc',
        per_page: '10',
        page: String(page),
      });
      pages = Number(res.headers['x-wp-totalpages']);
      expect(res.headers['x-wp-total']).toBe('23');
      seen.push(...(res.data as Json[]).map((o) => o.id as number));
    }
    expect(pages).toBe(3);
    expect(new Set(seen)).toEqual(new Set(ids));
    // The order changed last comes last.
    expect(seen[seen.length - 1]).toBe(ids[0]);
    expect(shop.metrics.orderPages).toBe(3);
    // Nothing changed after now.
    const later = await api.get('orders', {
      modified_after: new Date(Date.now() + 5000).toISOString().slice(0, 19),
      dates_are_gmt: 'true',
    });
    expect(later.data).toEqual([]);
    await expect(api.get('orders', { per_page: '101' })).rejects.toMatchObject({
      response: { status: 400, data: { code: 'rest_invalid_param' } },
    });
  });

  it('renders orders and refunds that webhook-ingest reads to the cent', async () => {
    shop.addProduct({ sku: 'MOU-01', price: '19.99', stock: 10 });
    const order = shop.createOrder({
      lines: [
        { sku: 'MOU-01', quantity: 3 },
        { sku: 'KEY-02', quantity: 1, price: '45.50', tax: '5.92' },
      ],
      shipping: '4.25',
    });
    expect(order.total).toBe('115.64'); // 59.97 + 45.50 + 5.92 + 4.25
    // The shop takes the stock of a processing order (and gives back what a refund restocks).
    expect(shop.stockOf('MOU-01')).toBe(7);
    const plan = planPedidoVenta(wooPedidoIntent(order));
    expect(plan.total).toBe('115.64');

    const refund = shop.refundOrder(order.id as number, { lines: [{ sku: 'MOU-01', quantity: 2 }], reason: 'dañado' });
    expect(refund.amount).toBe('39.98');
    expect(shop.stockOf('MOU-01')).toBe(9);
    const { data: refunds } = await api.get(`orders/${String(order.id)}/refunds`);
    expect(refunds).toEqual([refund]);
    const { data: again } = await api.get(`orders/${String(order.id)}`);
    const intent = wooPedidoIntent({ ...(again as Json), refunds });
    expect(intent.reembolsos).toHaveLength(1);
    expect(intent.reembolsos[0]!.monto.toFixed(2)).toBe('39.98');
    expect(intent.reembolsos[0]!.lineas).toEqual([expect.objectContaining({ id_linea: String((order.line_items as Json[])[0]!.id) })]);
    expect((again as Json).refunds).toEqual([{ id: refund.id, reason: 'dañado', total: '-39.98' }]);
    // Cancelled, it gives back what it still holds: the refund already restocked two.
    shop.cancelOrder(order.id as number);
    expect(shop.stockOf('MOU-01')).toBe(10);
    await expect(api.get('orders/999999')).rejects.toMatchObject({ response: { status: 404 } });
  });

  it('records every stock write of a products or variations batch, echoes it as product.updated, and refuses more than 100 items', async () => {
    const parent = shop.addProduct({ sku: 'TSHIRT', stock: null });
    const red = shop.addProduct({ sku: 'TSHIRT-RED', parentId: parent, stock: 3 });
    const mug = shop.addProduct({ sku: 'MUG', stock: 7 });
    const { data: found } = await api.get('products', { sku: 'MUG' });
    expect((found as Json[]).map((p) => p.id)).toEqual([mug]);
    const { data: vars } = await api.get(`products/${parent}/variations`, { sku: 'TSHIRT-RED' });
    expect((vars as Json[]).map((p) => p.id)).toEqual([red]);

    const receiver = await webhookReceiver();
    shop.addWebhook({ topic: 'product.updated', delivery_url: `${receiver.url}/api/webhook/woocommerce/tok/producto`, secret: 'p' });
    const { data: batch } = await api.post('products/batch', {
      update: [
        { id: mug, stock_quantity: 5 },
        { id: 424242, stock_quantity: 1 },
      ],
    });
    expect((batch as { update: Json[] }).update[0]).toMatchObject({ id: mug, stock_quantity: 5 });
    expect((batch as { update: Json[] }).update[1]).toMatchObject({ id: 424242, error: { code: 'woocommerce_rest_product_invalid_id' } });
    await api.post(`products/${parent}/variations/batch`, { update: [{ id: red, stock_quantity: 0 }] });
    expect(shop.stockWrites.map((w) => [w.sku, w.before, w.after])).toEqual([
      ['MUG', 7, 5],
      ['TSHIRT-RED', 3, 0],
    ]);
    expect(shop.stockOf('TSHIRT-RED')).toBe(0);
    // Each write echoes as a signed product.updated webhook with the new stock.
    await shop.settled();
    await receiver.close();
    const echoes = receiver.received.map((r) => [r.headers['x-wc-webhook-topic'], (JSON.parse(r.body.toString()) as Json).stock_quantity]);
    expect(echoes).toEqual([
      ['product.updated', 5],
      ['product.updated', 0],
    ]);
    expect(receiver.received.every((r) => verifySignature(r.body, 'p', String(r.headers['x-wc-webhook-signature'])))).toBe(true);
    const tooMany = Array.from({ length: 101 }, () => ({ id: mug, stock_quantity: 1 }));
    await expect(api.post('products/batch', { update: tooMany })).rejects.toMatchObject({ response: { status: 413 } });
    expect(shop.stockWrites).toHaveLength(2);
  });

  it('answers an injected 429 with Retry-After', async () => {
    shop.failNext({ count: 1, retryAfterSeconds: 3 });
    await expect(api.get('orders')).rejects.toMatchObject({ response: { status: 429, headers: { 'retry-after': '3' } } });
    expect((await api.get('orders')).status).toBe(200);
    expect(shop.metrics.throttled).toBe(1);
  });

  it('sends signed order webhooks webhook-ingest verifies and classifies, once each, never retried', async () => {
    const receiver = await webhookReceiver();
    try {
      const { data: created } = await api.post('webhooks', {
        name: 'ERP',
        topic: 'order.created',
        delivery_url: `${receiver.url}/api/webhook/woocommerce/tok`,
        secret: 's3cret',
      });
      await api.post('webhooks', { topic: 'order.updated', delivery_url: `${receiver.url}/api/webhook/woocommerce/tok`, secret: 's3cret' });
      expect(created).toMatchObject({ status: 'active', topic: 'order.created', resource: 'order', event: 'created' });
      const order = shop.createOrder({ lines: [{ sku: 'A', quantity: 2, price: '1.05' }] });
      shop.cancelOrder(order.id as number);
      await shop.settled();
      // Each webhook made through the API pings its URL first, unsigned, with a form body.
      const [pings, deliveries] = [receiver.received.slice(0, 2), receiver.received.slice(2)];
      for (const ping of pings) {
        expect(ping.body.toString()).toMatch(/^webhook_id=\d+$/);
        const headers = Object.fromEntries(Object.entries(ping.headers).map(([k, v]) => [k, String(v)]));
        expect(classify({ plataforma: 'woocommerce', recurso: 'pedido', headers, body: ping.body })).toEqual({ kind: 'ping' });
      }
      expect(deliveries).toHaveLength(2);
      for (const r of deliveries) {
        expect(verifySignature(r.body, 's3cret', String(r.headers['x-wc-webhook-signature']))).toBe(true);
        expect(verifySignature(r.body, 'other', String(r.headers['x-wc-webhook-signature']))).toBe(false);
        const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
        expect(classify({ plataforma: 'woocommerce', recurso: 'pedido', headers, body: r.body })).toMatchObject({
          kind: 'entrega',
          referencia: expect.stringContaining(String(order.id)),
        });
      }
      expect(deliveries.map((r) => r.headers['x-wc-webhook-topic'])).toEqual(['order.created', 'order.updated']);
      expect(deliveries.map((r) => r.headers['x-wc-webhook-id'])).toEqual([String(created.id), expect.any(String)]);
      expect(JSON.parse(deliveries[1]!.body.toString()).status).toBe('cancelled');
      await expect(api.delete(`webhooks/${String(created.id)}`)).rejects.toMatchObject({ response: { status: 501 } });
      await api.delete(`webhooks/${String(created.id)}`, { force: true });
      await expect(api.get(`webhooks/${String(created.id)}`)).rejects.toMatchObject({ response: { status: 400 } });
    } finally {
      await receiver.close();
    }
  });

  it('disables a webhook after more consecutive failures than woocommerce_max_webhook_delivery_failures, and a success resets the count', async () => {
    const receiver = await webhookReceiver(() => 500);
    try {
      const hook = shop.addWebhook({ topic: 'order.created', delivery_url: receiver.url });
      for (let i = 0; i < 6; i++) shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      expect(shop.webhooks.get(hook.id)!.status).toBe('active');
      receiver.setAnswer(() => 200);
      shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      expect(shop.webhooks.get(hook.id)!.failureCount).toBe(0);
      receiver.setAnswer(() => 503);
      for (let i = 0; i < 7; i++) shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      const { data } = await api.get(`webhooks/${hook.id}`);
      expect(data).toMatchObject({ status: 'disabled' });
      // Disabled, it sends nothing; every attempt was made once (no retries).
      const attempts = shop.deliveries.length;
      shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      expect(shop.deliveries).toHaveLength(attempts);
      expect(attempts).toBe(14);
      await api.put(`webhooks/${hook.id}`, { status: 'active' });
      expect(shop.webhooks.get(hook.id)!.status).toBe('active');
      // Re-activated, it keeps its failure count: the next failure disables it again.
      shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      expect(shop.webhooks.get(hook.id)!.status).toBe('disabled');
    } finally {
      await receiver.close();
    }
  });

  it('drops and duplicates by a seed, and reorders held webhooks', async () => {
    const receiver = await webhookReceiver();
    try {
      shop.addWebhook({ topic: 'order.created', delivery_url: receiver.url });
      shop.setFaults({ drop: 0.3, duplicate: 0.2, seed: 7 });
      for (let i = 0; i < 40; i++) shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      const ids = receiver.received.map((r) => JSON.parse(r.body.toString()).id as number);
      expect(shop.dropped.length).toBeGreaterThan(4);
      expect(new Set(ids).size).toBe(40 - shop.dropped.length);
      expect(ids.length).toBeGreaterThan(new Set(ids).size);

      // The same seed, the same drops.
      const again = await WooShop.start({ faults: { drop: 0.3, duplicate: 0.2, seed: 7 } });
      again.addWebhook({ topic: 'order.created', delivery_url: receiver.url });
      for (let i = 0; i < 40; i++) again.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await again.settled();
      expect(again.dropped.map((o) => JSON.parse(o.body).number)).toEqual(shop.dropped.map((o) => JSON.parse(o.body).number));
      await again.close();

      receiver.received.length = 0;
      shop.setFaults({});
      shop.holdWebhooks();
      const held = [1, 2, 3].map(() => shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] }).id);
      await shop.settled();
      expect(receiver.received).toHaveLength(0);
      shop.releaseWebhooks('reverse');
      await eventually(async () => expect(receiver.received).toHaveLength(3));
      expect(receiver.received.map((r) => JSON.parse(r.body.toString()).id)).toEqual([...held].reverse());
    } finally {
      await receiver.close();
    }
  });
});

async function fetchNoAuth(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { ca: testCa().caPem }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}
