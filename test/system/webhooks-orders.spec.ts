import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { inventorySubjects, webhookSubjects } from '@erp/contracts';
import { Stack, json } from '../support/stack';
import { deliver, webhookStore } from '../support/webhook-fixture';
import { shopifyHeaders, shopifyOrderBody, wooHeaders, wooOrder } from '../../services/webhook-ingest/test/platform.factories';

const WOO_SECRET = 'wc_secret_0d9e8f7a6b5c';
const KEY = 'test_key_webhook_orders_0123456789ab';
const ROOT = path.resolve(__dirname, '../..');

function fixture(): unknown {
  return webhookStore({
    nombre: 'Tienda en Línea S.A.',
    key: KEY,
    vender_sin_stock: false,
    productos: [
      {
        ref: 'laptop',
        nombre: 'Laptop 14',
        codigo: 'LAP-14',
        tipo: 'Producto',
        precio: 649.99,
        enable: 1,
        inventarios: [{ bodega: 'principal', stock: 10 }],
      },
      {
        ref: 'mouse',
        nombre: 'Mouse',
        codigo: 'MOU-01',
        barcode: '7401000000021',
        tipo: 'Producto',
        precio: 19.95,
        enable: 1,
        inventarios: [{ bodega: 'principal', stock: 1 }],
      },
    ],
    integraciones: [
      { ref: 'woo', plataforma: 'woocommerce', secreto: WOO_SECRET },
      { ref: 'shop', plataforma: 'shopify' },
    ],
  });
}

describe('platform orders become sales exactly once', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let integ: Record<string, WebhookToken>;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'webhook-ingest'] });
    seeded = await stack.seed(fixture());
    integ = seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>;
  });
  afterAll(async () => {
    await stack.stop();
  });

  const productoId = (ref: string) => (seeded.empresas.tienda!.productos as Record<string, number>)[ref]!;
  const stockOf = async (id: number) => {
    const res = await stack.api(`/api/external/v1/inventory/${id}`, { key: KEY });
    return (await json(res)).data.inventarios[0]?.stock as number | undefined;
  };
  const salesWith = (referencia: string) =>
    stack.query<{ id: number; estado: string }>('select id, estado from sales.ventas where referencia_externa = $1', [referencia]);
  const delivery = (id: number) =>
    stack.query<{ estado: string; motivo: string | null; id_venta: number | null }>(
      'select estado, motivo, id_venta from webhook_ingest.entregas where id = $1',
      [id],
    );
  const settled = async (id: number, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await delivery(id);
      if (row && row.estado !== 'recibida') return row;
      if (Date.now() > until) throw new Error(`delivery ${id} not processed in time`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** The admin CLI as an operator runs it, against this stack's NATS prefix. */
  const admin = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', 'services/admin/src/cli.ts', ...args],
      {
        cwd: ROOT,
        env: { ...process.env, NATS_URL: stack.iso.natsUrl, SUBJECT_PREFIX: stack.iso.subjectPrefix, LOG_LEVEL: 'silent' },
      },
    );
    return JSON.parse(stdout);
  };
  const sendWoo = async (payload: unknown) => {
    const body = JSON.stringify(payload);
    const res = await deliver(stack.baseUrl, integ.woo!.path, body, wooHeaders(body, 'order.updated', WOO_SECRET));
    expect(res.status).toBe(200);
    return (await json(res)) as { estado: string; id_entrega: number };
  };

  it('the same order delivered 5 times at once, and again later, gives one sale and one stock movement', async () => {
    const order = wooOrder({
      id: 5101,
      status: 'processing',
      date_modified_gmt: '2026-03-12T16:04:35',
      line_items: [{ product_id: 93, sku: 'LAP-14', name: 'Laptop 14', quantity: 2, total: '1150.43', total_tax: '149.55' }],
    });
    const body = JSON.stringify(order);
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => deliver(stack.baseUrl, integ.woo!.path, body, wooHeaders(body, 'order.updated', WOO_SECRET))),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const ids = new Set(await Promise.all(replies.map(async (r) => (await json(r)).id_entrega)));
    expect(ids.size).toBe(1);
    const processed = await settled([...ids][0]);
    expect(processed).toMatchObject({ estado: 'procesada', id_venta: expect.any(Number) });

    // Later, WooCommerce retries (new delivery id, same order): recognised, nothing moves again.
    expect(await sendWoo(order)).toMatchObject({ estado: 'duplicada' });
    const sales = await salesWith('woo-5101');
    expect(sales).toEqual([{ id: processed.id_venta, estado: 'Completada' }]);
    const sale = await json(await stack.api(`/api/external/v1/sales/${processed.id_venta}`, { key: KEY }));
    expect(sale.data).toMatchObject({ total: 1299.98, detalles: [{ cantidad: 2, id_producto: productoId('laptop') }] });
    expect(await stockOf(productoId('laptop'))).toBe(8);
    const moves = await stack.query(
      "select count(*)::int as n from inventory.movimientos where producto_id = $1 and tipo <> 'inventario_inicial'",
      [productoId('laptop')],
    );
    expect(moves[0]!.n).toBe(1);
  });

  it('a Shopify order with an 18-digit id, retried with the same event id, is one sale; stock may go below zero', async () => {
    const body = shopifyOrderBody({
      id: '820982911946154508',
      financial_status: 'paid',
      line_items: [
        {
          id: '866550311766439020',
          product_id: '632910392',
          variant_id: '808950810',
          sku: '7401000000021',
          title: 'Mouse',
          quantity: 3,
          price: '19.95',
        },
      ],
    });
    const first = await deliver(stack.baseUrl, integ.shop!.path, body, shopifyHeaders(body, 'orders/create', undefined, 'evt-1'));
    const { id_entrega } = await json(first);
    expect(await settled(id_entrega)).toMatchObject({ estado: 'procesada' });
    const retry = await deliver(stack.baseUrl, integ.shop!.path, body, shopifyHeaders(body, 'orders/create', undefined, 'evt-1'));
    expect(await json(retry)).toMatchObject({ estado: 'duplicada', id_entrega });
    expect(await salesWith('shop-820982911946154508')).toHaveLength(1);
    // The company forbids selling without stock, but the platform already took the order.
    expect(await stockOf(productoId('mouse'))).toBe(-2);
  });

  it('processing → cancelled → stale processing: the sale ends annulled and stock where it started', async () => {
    const before = await stockOf(productoId('laptop'));
    const at = (status: string, modified: string) =>
      wooOrder({
        id: 5102,
        status,
        date_modified_gmt: modified,
        line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '575.21', total_tax: '74.78' }],
      });
    const created = await sendWoo(at('processing', '2026-03-12T10:00:00'));
    expect(await settled(created.id_entrega)).toMatchObject({ estado: 'procesada' });
    expect(await stockOf(productoId('laptop'))).toBe(before! - 1);
    const cancelled = await sendWoo(at('cancelled', '2026-03-12T11:00:00'));
    expect(await settled(cancelled.id_entrega)).toMatchObject({ estado: 'procesada' });
    const stale = await sendWoo(at('processing', '2026-03-12T10:30:00'));
    expect(await settled(stale.id_entrega)).toMatchObject({ estado: 'ignorada' });
    expect(await salesWith('woo-5102')).toEqual([{ id: expect.any(Number), estado: 'Anulada' }]);
    expect(await stockOf(productoId('laptop'))).toBe(before);
  });

  it('a pending order becomes a Pendiente sale for the customer found or created by its email', async () => {
    const pending = (id: number, email: string) =>
      wooOrder({
        id,
        status: 'on-hold',
        email,
        first_name: 'Marta',
        last_name: 'Ruiz',
        line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '575.21', total_tax: '74.78' }],
      });
    const first = await sendWoo(pending(5211, 'marta.ruiz@example.com'));
    expect(await settled(first.id_entrega)).toMatchObject({ estado: 'procesada', motivo: null });
    const second = await sendWoo(pending(5212, '  Marta.Ruiz@Example.COM '));
    expect(await settled(second.id_entrega)).toMatchObject({ estado: 'procesada' });
    const rows = await stack.query<{ referencia_externa: string; estado: string; cliente_id: number }>(
      "select referencia_externa, estado, cliente_id from sales.ventas where referencia_externa in ('woo-5211', 'woo-5212') order by 1",
    );
    expect(rows.map((r) => r.estado)).toEqual(['Pendiente', 'Pendiente']);
    expect(rows[0]!.cliente_id).toBe(rows[1]!.cliente_id);
    const clientes = await stack.query<{ nombre: string; email: string }>('select nombre, email from sales.clientes where id = $1', [
      rows[0]!.cliente_id,
    ]);
    expect(clientes).toEqual([{ nombre: 'Marta Ruiz', email: 'marta.ruiz@example.com' }]);
  });

  it('an order whose customer name carries NUL characters becomes a sale at once, the name without them', async () => {
    const order = wooOrder({
      id: 5230,
      status: 'on-hold',
      email: 'nul.name@example.com',
      first_name: 'Jo\u0000sé',
      last_name: '\u0000',
      line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '575.21', total_tax: '74.78' }],
    });
    const sent = await sendWoo(order);
    expect(await settled(sent.id_entrega, 5_000)).toMatchObject({ estado: 'procesada', motivo: null });
    const [venta] = await stack.query<{ cliente_id: number }>("select cliente_id from sales.ventas where referencia_externa = 'woo-5230'");
    const clientes = await stack.query<{ nombre: string }>('select nombre from sales.clientes where id = $1', [venta!.cliente_id]);
    expect(clientes).toEqual([{ nombre: 'José' }]);
  });

  it('an order paid after it was pending turns its Pendiente sale into Completada without moving stock again', async () => {
    const before = await stockOf(productoId('laptop'));
    const at = (status: string, modified: string) =>
      wooOrder({
        id: 5221,
        status,
        email: 'marta.ruiz@example.com',
        date_modified_gmt: modified,
        line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '575.21', total_tax: '74.78' }],
      });
    expect(await settled((await sendWoo(at('on-hold', '2026-03-14T10:00:00'))).id_entrega)).toMatchObject({ estado: 'procesada' });
    expect(await salesWith('woo-5221')).toEqual([{ id: expect.any(Number), estado: 'Pendiente' }]);
    const paid = await settled((await sendWoo(at('processing', '2026-03-14T12:00:00'))).id_entrega);
    expect(paid).toMatchObject({ estado: 'procesada', motivo: 'Venta pendiente completada: el pedido ya está pagado' });
    expect(await salesWith('woo-5221')).toEqual([{ id: paid.id_venta, estado: 'Completada' }]);
    const again = await settled((await sendWoo(at('completed', '2026-03-14T13:00:00'))).id_entrega);
    expect(again).toMatchObject({ estado: 'procesada', motivo: 'La venta del pedido ya existía' });
    expect(await stockOf(productoId('laptop'))).toBe(before! - 1);
  });

  it('a cancellation annuls the sale even when the order’s record lost its id (crash after the sale was made)', async () => {
    const before = await stockOf(productoId('laptop'));
    const at = (status: string, modified: string) =>
      wooOrder({
        id: 5301,
        status,
        date_modified_gmt: modified,
        line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '575.21', total_tax: '74.78' }],
      });
    expect(await settled((await sendWoo(at('processing', '2026-03-13T10:00:00'))).id_entrega)).toMatchObject({ estado: 'procesada' });
    await stack.query("update webhook_ingest.pedidos set id_venta = null where referencia = 'woo-5301'");
    expect(await settled((await sendWoo(at('cancelled', '2026-03-13T11:00:00'))).id_entrega)).toMatchObject({
      estado: 'procesada',
      motivo: 'Venta anulada',
    });
    expect(await salesWith('woo-5301')).toEqual([{ id: expect.any(Number), estado: 'Anulada' }]);
    expect(await stockOf(productoId('laptop'))).toBe(before);
  });

  it('orders arriving while inventory is stopped are all answered 200 and all become sales once it is back', async () => {
    const before = await stockOf(productoId('laptop'));
    await stack.stopService('inventory');
    const sent = await Promise.all(
      [5201, 5202, 5203].map((id) =>
        sendWoo(
          wooOrder({
            id,
            status: 'processing',
            line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '575.21', total_tax: '74.78' }],
          }),
        ),
      ),
    );
    expect(sent.map((r) => r.estado)).toEqual(['recibida', 'recibida', 'recibida']);
    await new Promise((r) => setTimeout(r, 700));
    await stack.startService('inventory');
    for (const r of sent) expect(await settled(r.id_entrega)).toMatchObject({ estado: 'procesada' });
    for (const id of [5201, 5202, 5203]) expect(await salesWith(`woo-${id}`)).toHaveLength(1);
    expect(await stockOf(productoId('laptop'))).toBe(before! - 3);
  });

  it('an unknown product keeps the delivery failed; after the product is added a replay creates the sale once', async () => {
    const order = wooOrder({
      id: 5103,
      status: 'completed',
      line_items: [{ product_id: 777, sku: 'NEW-77', name: 'Producto nuevo', quantity: 1, total: '8.85', total_tax: '1.15' }],
    });
    const sent = await sendWoo(order);
    expect(await settled(sent.id_entrega)).toMatchObject({ estado: 'fallida', motivo: expect.stringContaining('NEW-77') });
    const failed = await admin('webhooks', 'failed', String(seeded.empresas.tienda!.id));
    expect(failed).toEqual([
      expect.objectContaining({
        id: sent.id_entrega,
        referencia: 'woo-5103',
        estado: 'fallida',
        motivo: expect.stringContaining('NEW-77'),
      }),
    ]);

    await stack.admin.request(
      inventorySubjects,
      'inventory.admin.seed',
      { empresa_id: seeded.empresas.tienda!.id, productos: [{ ref: 'nuevo', nombre: 'Producto nuevo', codigo: 'NEW-77', precio: 10 }] },
      { requestId: 't' },
    );
    const replay = await admin('webhooks', 'replay', '--empresa', String(seeded.empresas.tienda!.id));
    expect(replay.reencoladas).toEqual([sent.id_entrega]);
    expect(await settled(sent.id_entrega)).toMatchObject({ estado: 'procesada', id_venta: expect.any(Number) });
    await stack.admin.request(webhookSubjects, 'webhooks.admin.delivery.replay', { ids: [sent.id_entrega] }, { requestId: 't' });
    expect(await sendWoo(order)).toMatchObject({ estado: 'duplicada' });
    expect(await salesWith('woo-5103')).toHaveLength(1);
  });

  it('rotating a token from the CLI stops the old one at once', async () => {
    const rotated = await admin('webhooks', 'rotate', String(integ.shop!.id));
    expect(rotated).toEqual({ id: integ.shop!.id, token: expect.any(String), path: `/api/webhook/shopify/${rotated.token}` });
    const body = JSON.stringify({ id: 1, title: 'x' });
    expect((await deliver(stack.baseUrl, integ.shop!.path, body, shopifyHeaders(body, 'products/update'))).status).toBe(401);
    expect((await deliver(stack.baseUrl, rotated.path, body, shopifyHeaders(body, 'products/update'))).status).toBe(200);
  });
});
