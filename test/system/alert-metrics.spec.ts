import type { WebhookToken } from '@erp/back-office';
import { API_VERSION, type ServiceName } from '@erp/contracts';
import { TestReceiver } from '../../services/subscriptions/test/receiver';
import { eventually } from '@erp/testing';
import { Stack } from '../support/stack';
import { deliver, webhookStore } from '../support/webhook-fixture';
import { wooHeaders, wooOrder } from '../../services/webhook-ingest/test/platform.factories';

const KEY = 'test_key_alert_metrics_0123456789ab';
const WOO_SECRET = 'wc_secret_alert_metrics';

/**
 * The metrics the chart's alerts read (docs/alerts.md), scraped from the running services while
 * their state changes: each gauge read from the database says what the database holds.
 */
describe('the metrics behind the alerts', () => {
  let stack: Stack;
  let woo: WebhookToken;
  let orderId = 4000;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'webhook-ingest', 'subscriptions'],
      contract: false,
      // A failing receiver's subscription is disabled after a second and a half.
      subscriptions: { EVENTS_POLL_MS: '100', EVENTS_RETRY_SCHEDULE_MS: '200', EVENTS_RETRY_WINDOW_MS: '1500' },
    });
    const seeded = await stack.seed(
      webhookStore({
        nombre: 'Tienda Métricas',
        key: KEY,
        vender_sin_stock: true,
        productos: [
          {
            ref: 'mouse',
            nombre: 'Mouse',
            codigo: 'MOU-01',
            tipo: 'Producto',
            precio: 19.95,
            enable: 1,
            inventarios: [{ bodega: 'principal', stock: 50 }],
          },
        ],
        integraciones: [{ ref: 'woo', plataforma: 'woocommerce', secreto: WOO_SECRET }],
      }),
    );
    woo = (seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>).woo!;
  });
  afterAll(async () => {
    for (const receiver of receivers) await receiver.stop();
    await stack.stop();
  });

  /** The value of the series of `name` whose labels include `labels`, from the service's /metrics; undefined when absent. */
  const metric = async (service: ServiceName, name: string, labels: Record<string, string> = {}): Promise<number | undefined> => {
    const text = await (await fetch(`http://127.0.0.1:${stack.running.get(service)!.opsPort}/metrics`)).text();
    for (const line of text.split('\n')) {
      const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name) continue;
      const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
    }
    return undefined;
  };
  const sendOrder = async (sku: string, productId: number) => {
    const body = JSON.stringify(
      wooOrder({
        id: ++orderId,
        status: 'processing',
        line_items: [{ product_id: productId, sku, name: sku, quantity: 1, total: '17.66', total_tax: '2.29' }],
      }),
    );
    expect((await deliver(stack.baseUrl, woo.path, body, wooHeaders(body, 'order.updated', WOO_SECRET))).status).toBe(200);
  };

  it('says which build runs and how each pool is used', async () => {
    for (const service of stack.running.keys()) {
      expect({ service, build: await metric(service, 'erp_build_info', { service, version: API_VERSION }) }).toEqual({ service, build: 1 });
      expect({ service, max: await metric(service, 'erp_db_pool_max_connections') }).toEqual({ service, max: 5 });
      expect({ service, waiting: await metric(service, 'erp_db_pool_waiting_clients') }).toEqual({ service, waiting: 0 });
      expect(await metric(service, 'erp_db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
    }
  });

  it('counts platform deliveries processed and kept as failed, from zero', async () => {
    expect(await metric('webhook-ingest', 'erp_webhook_deliveries_processed_total', { outcome: 'fallida' })).toBe(0);
    await sendOrder('MOU-01', 7);
    await sendOrder('NO-SUCH-SKU', 8);
    await eventually(async () => {
      expect(await metric('webhook-ingest', 'erp_webhook_deliveries_processed_total', { outcome: 'procesada' })).toBe(1);
      expect(await metric('webhook-ingest', 'erp_webhook_deliveries_processed_total', { outcome: 'fallida' })).toBe(1);
      expect(await metric('webhook-ingest', 'erp_webhook_deliveries_failed')).toBe(1);
      expect(await metric('webhook-ingest', 'erp_webhook_deliveries_pending')).toBe(0);
    });
  });

  it('reports platform deliveries waiting while sales is away, and the age of the oldest', async () => {
    await stack.stopService('sales');
    try {
      await sendOrder('MOU-01', 7);
      await eventually(async () => {
        expect(await metric('webhook-ingest', 'erp_webhook_deliveries_pending')).toBe(1);
        expect(await metric('webhook-ingest', 'erp_webhook_oldest_pending_age_seconds')).toBeGreaterThan(1);
      });
    } finally {
      await stack.startService('sales');
    }
    await eventually(async () => expect(await metric('webhook-ingest', 'erp_webhook_oldest_pending_age_seconds')).toBe(0), 20_000);
  });

  it('counts failed attempts to a partner, and the subscription disabled after its window, whose events stop counting as owed', async () => {
    const receiver = await TestReceiver.start();
    receivers.push(receiver);
    receiver.behave = () => 'fail';
    const res = await stack.api('/api/external/v1/event-subscriptions', {
      key: KEY,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['*'] }),
    });
    expect(res.status).toBe(201);
    expect(await metric('subscriptions', 'erp_partner_subscriptions', { state: 'enabled' })).toBe(1);
    await sendOrder('MOU-01', 7);
    await eventually(async () => {
      expect(await metric('subscriptions', 'erp_partner_deliveries_pending')).toBeGreaterThan(0);
      expect(await metric('subscriptions', 'erp_partner_oldest_pending_age_seconds')).toBeGreaterThan(0);
    });
    await eventually(async () => {
      expect(await metric('subscriptions', 'erp_partner_subscriptions', { state: 'disabled' })).toBe(1);
      expect(await metric('subscriptions', 'erp_partner_subscriptions', { state: 'enabled' })).toBe(0);
      expect(await metric('subscriptions', 'erp_partner_deliveries_pending')).toBe(0);
    });
    expect(await metric('subscriptions', 'erp_partner_delivery_attempts_total', { outcome: 'failed' })).toBe(receiver.received.length);
    expect(await metric('subscriptions', 'erp_partner_delivery_attempts_total', { outcome: 'delivered' })).toBe(0);
  });

  it('reports open stock reservations and the age of the oldest', async () => {
    expect(await metric('inventory', 'erp_inventory_open_reservations')).toBe(0);
    const [empresa] = await stack.query<{ id: number }>('select id from gateway.empresas limit 1');
    // One left open ten seconds ago, not due for the sweeper's check for an hour.
    await stack.query(
      `insert into inventory.reservas (empresa_id, clave, origen, estado, lineas, revisar_en, created_at)
       values ($1, 'alert-metrics', 'venta', 'reservada', '[]', now() + interval '1 hour', now() - interval '10 seconds')`,
      [empresa!.id],
    );
    expect(await metric('inventory', 'erp_inventory_open_reservations')).toBe(1);
    expect(await metric('inventory', 'erp_inventory_oldest_open_reservation_age_seconds')).toBeGreaterThanOrEqual(10);
  });
});
