import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { BaseConfig, loadConfig, startService, type RunningService } from '@erp/runtime';
import { busSales, webhookIngestService, type VentasPort } from '@erp/webhook-ingest';
import { Stack, json, stackEnv } from '../support/stack';
import { deliver, webhookStore } from '../support/webhook-fixture';
import { wooHeaders, wooOrder } from '../../services/webhook-ingest/test/platform.factories';

const WOO_SECRET = 'wc_secret_grupos_5e6f7a8b';
const KEY = 'test_key_webhook_groups_0123456789ab';
const STOCK = 1000;
const CODES = ['GRP-A', 'GRP-B', 'GRP-C'];

/**
 * A sale day's burst of WooCommerce orders, processed in groups whose sales the real sales
 * service makes by `sales.batch.create`: every order one sale and its stock moved once, under
 * duplicates, later versions in the same burst, and a group that fails after its batch committed.
 */
describe('a burst of shop orders becomes sales in groups, each order once', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let woo: WebhookToken;
  let ingest: RunningService<BaseConfig>;
  /** Armed: the next batch of sales is made, then its group fails as a crash would leave it (nothing of ours committed). */
  let failAfterBatch = false;
  let batchesFailed = 0;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'] });
    const real = busSales(stack.admin);
    const sales: VentasPort = {
      ...real,
      createVentas: async (ctx, inputs) => {
        const made = await real.createVentas(ctx, inputs);
        if (failAfterBatch) {
          failAfterBatch = false;
          batchesFailed++;
          throw new Error('the group died after its batch committed');
        }
        return made;
      },
    };
    ingest = await startService(webhookIngestService(loadConfig(BaseConfig, stackEnv(stack.iso)), { deps: { sales } }), {
      migrateOnStart: true,
    });
    seeded = await stack.seed(
      webhookStore({
        nombre: 'Tienda de Temporada S.A.',
        key: KEY,
        vender_sin_stock: false,
        productos: CODES.map((codigo, i) => ({
          ref: codigo,
          nombre: `Producto ${codigo}`,
          codigo,
          tipo: 'Producto',
          precio: 10 + i,
          enable: 1,
          inventarios: [{ bodega: 'principal', stock: STOCK }],
        })),
        integraciones: [{ ref: 'woo', plataforma: 'woocommerce', secreto: WOO_SECRET }],
      }),
    );
    woo = (seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>).woo!;
  });
  afterAll(async () => {
    await ingest?.stop();
    await stack.stop();
  });

  const productoId = (codigo: string) => (seeded.empresas.tienda!.productos as Record<string, number>)[codigo]!;
  const stockOf = async (codigo: string) =>
    (await json(await stack.api(`/api/external/v1/inventory/${productoId(codigo)}`, { key: KEY }))).data.inventarios[0]?.stock as number;
  const metric = async (name: string) => {
    const line = (await ingest.ctx.metrics.getSingleMetricAsString(name)).split('\n').find((l) => l.startsWith(name));
    return Number(line?.split(' ').pop());
  };
  /** Every delivery processed, the sales' events consumed. */
  const settle = async () => {
    await stack.settled(60_000);
    const waiting = await stack.query<{ n: number }>("select count(*)::int as n from webhook_ingest.entregas where estado = 'recibida'");
    expect(waiting[0]!.n).toBe(0);
  };
  /** The orders `first`… of one to three units of the products, in a body sent as often as asked. */
  const orders = (first: number, count: number) =>
    Array.from({ length: count }, (_, i) => {
      const id = first + i;
      const lines = CODES.slice(0, 1 + (id % 3)).map((sku, k) => ({
        product_id: 700 + CODES.indexOf(sku),
        sku,
        quantity: 1 + ((id + k) % 3),
        total: '10.00',
        total_tax: '1.30',
      }));
      const body = JSON.stringify(wooOrder({ id, status: 'processing', date_modified_gmt: '2026-11-27T10:00:00', line_items: lines }));
      return { id, body, lines };
    });
  const send = async (body: string) => {
    const res = await deliver(stack.baseUrl, woo.path, body, wooHeaders(body, 'order.updated', WOO_SECRET));
    expect(res.status).toBe(200);
  };
  /** What the books say of the orders: sales by reference and state, and what their stock moved. */
  const books = async (ids: number[]) =>
    stack.query<{ referencia_externa: string; estado: string; n: number }>(
      `select referencia_externa, estado, count(*)::int as n from sales.ventas
       where referencia_externa = any($1) group by referencia_externa, estado order by referencia_externa`,
      [ids.map((id) => `woo-${id}`)],
    );

  it('makes each order of a burst once, with duplicates and cancellations among them, and moves its stock once', async () => {
    const burst = orders(6000, 80);
    const cancelled = new Set(burst.filter((o) => o.id % 16 === 0).map((o) => o.id));
    const before = Object.fromEntries(await Promise.all(CODES.map(async (c) => [c, await stockOf(c)] as const)));
    const groupsBefore = await metric('erp_webhook_delivery_groups_total');
    // Each order twice (a retry of the shop), and a later cancelled version of some, all at once.
    await Promise.all([
      ...burst.map((o) => send(o.body)),
      ...burst.map((o) => send(o.body)),
      ...[...cancelled].map((id) =>
        send(JSON.stringify(wooOrder({ id, status: 'cancelled', date_modified_gmt: '2026-11-27T11:00:00', line_items: [] }))),
      ),
    ]);
    await settle();

    expect(await books(burst.map((o) => o.id))).toEqual(
      burst
        .filter((o) => !cancelled.has(o.id))
        .map((o) => ({ referencia_externa: `woo-${o.id}`, estado: 'Completada', n: 1 }))
        .concat(
          // A cancellation that came first leaves no sale; one that came after its sale annuls it.
          (await books([...cancelled])).filter((r) => r.estado === 'Anulada'),
        )
        .sort((a, b) => a.referencia_externa.localeCompare(b.referencia_externa)),
    );
    for (const codigo of CODES) {
      const sold = burst
        .filter((o) => !cancelled.has(o.id))
        .flatMap((o) => o.lines.filter((l) => l.sku === codigo))
        .reduce((n, l) => n + l.quantity, 0);
      expect([codigo, await stockOf(codigo)]).toEqual([codigo, before[codigo]! - sold]);
    }
    expect(await metric('erp_webhook_delivery_groups_total')).toBeGreaterThan(groupsBefore);
    expect(await metric('erp_webhook_deliveries_grouped_total')).toBeGreaterThan(burst.length / 2);
  }, 120_000);

  it('processes again the orders of a group that failed after its batch committed: their sales are found, none made twice', async () => {
    const burst = orders(7000, 40);
    const before = Object.fromEntries(await Promise.all(CODES.map(async (c) => [c, await stockOf(c)] as const)));
    failAfterBatch = true;
    await Promise.all(burst.map((o) => send(o.body)));
    await settle();

    expect(batchesFailed).toBe(1);
    expect(await books(burst.map((o) => o.id))).toEqual(
      burst.map((o) => ({ referencia_externa: `woo-${o.id}`, estado: 'Completada', n: 1 })),
    );
    for (const codigo of CODES) {
      const sold = burst.flatMap((o) => o.lines.filter((l) => l.sku === codigo)).reduce((n, l) => n + l.quantity, 0);
      expect([codigo, await stockOf(codigo)]).toEqual([codigo, before[codigo]! - sold]);
    }
    // The orders of the failed group were made again and found made: the sales it had committed.
    const found = await stack.query<{ n: number }>(
      `select count(*)::int as n from webhook_ingest.entregas
       where referencia = any($1) and estado = 'procesada' and motivo like 'La venta del pedido ya existía%'`,
      [burst.map((o) => `woo-${o.id}`)],
    );
    expect(found[0]!.n).toBeGreaterThan(1);
  }, 120_000);
});
