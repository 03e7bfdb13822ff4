import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { returnsAdminSubjects } from '@erp/contracts';
import { eventually } from '@erp/testing';
import { Stack, json } from '../support/stack';
import { API, SALES_KEY_A, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { published, wooHeaders } from '../../services/webhook-ingest/test/platform.factories';
import { deliver } from '../support/webhook-fixture';

/* eslint-disable @typescript-eslint/no-explicit-any */

const WOO_SECRET = 'wc_secret_stock_cause';
const ctx = { requestId: 'stock-cause' };

/**
 * The platforms' own payloads (services/webhook-ingest/test/fixtures/platforms, sources in its
 * README), changed only where this shop differs: WooCommerce's order 727, published without a SKU
 * on its first line and with the sample shop's `Bar3` on the second, is sold here as our laptop and
 * cement, its two goods (its shipping line moves no stock).
 */
const WOO_727_SKUS: Array<[string, string]> = [
  ['"sku": "",\n      "price": 3', '"sku": "LAP-14",\n      "price": 3'],
  ['"sku": "Bar3"', '"sku": "CEM-42"'],
];
/**
 * WooCommerce's published product 794 as our mouse. Published, it does not manage its stock
 * (nothing to move): the shop here manages it, at 200 units, the one change under test.
 */
const WOO_794_MANAGED: Array<[string, string]> = [
  ['"sku": "",', '"sku": "MOU-01",'],
  ['"manage_stock": false,', '"manage_stock": true,'],
  ['"stock_quantity": null,', '"stock_quantity": 200,'],
];

/** Company A of the sales tests, with a WooCommerce integration on its main warehouse. */
function fixture() {
  const f = salesFixture();
  const [a] = f.empresas as Array<Record<string, unknown>>;
  a!.integraciones = [
    {
      ref: 'woo',
      plataforma: 'woocommerce',
      secreto: WOO_SECRET,
      usuario: 'admin',
      sucursal: 'centro',
      bodega: 'principal',
      documento: 'ticket',
      canal: 'web',
    },
  ];
  return { empresas: [a] };
}

/**
 * Every stock change a partner is told of names what moved it, with ids its GETs answer: the sale
 * (created, edited, annulled; one made from a platform order names that order too), the return
 * (and its annulment), or the platform that sent a product's stock.
 */
describe('stock.changed names its cause', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'returns', 'webhook-ingest', 'subscriptions'],
      subscriptions: { EVENTS_POLL_MS: '100' },
    });
    seeded = await stack.seed(fixture());
    a = refsOf(seeded, 'a');
  });
  afterAll(() => stack?.stop());

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await stack.api(`${API}${path}`, {
      key: SALES_KEY_A,
      method,
      ...(body !== undefined ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await json(res)) as any };
  };
  const woo = async (path: string, topic: string, body: string) => {
    const res = await deliver(stack.baseUrl, path, body, wooHeaders(body, topic, WOO_SECRET));
    expect(res.status).toBe(200);
    const { id_entrega } = (await json(res)) as { id_entrega: number };
    await eventually(async () => {
      const [row] = await stack.query<{ estado: string }>('select estado from webhook_ingest.entregas where id = $1', [id_entrega]);
      expect(row?.estado).toBe('procesada');
    }, 20_000);
  };
  const stockChanges = async () => (await call('GET', '/events?types=stock.changed&per_page=100')).body.data.map((e: any) => e.data);

  it('names the sale, the return, the platform order and the platform behind each change, each one its GET answers', async () => {
    const mouse = a.productos.mouse!;
    const laptop = a.productos.laptop!;
    const cemento = a.productos.cemento!;
    const integracion = (seeded.empresas.a!.integraciones as Record<string, WebhookToken>).woo!;

    const sale = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, { estado: 'Pendiente', id_cliente: a.clientes.juan, detalles: [{ id_producto: mouse, cantidad: 2 }] }),
    );
    expect(sale.status).toBe(201);
    const idVenta = sale.body.data.id as number;
    const updated = await call('PUT', `/sales/${idVenta}`, { detalles: [{ id_producto: mouse, cantidad: 3 }] });
    expect(updated.status).toBe(200);

    const { devolucion } = await stack.admin.request(
      returnsAdminSubjects,
      'returns.admin.create',
      {
        empresa_id: a.id,
        id_venta: idVenta,
        fecha: '2026-04-05',
        tipo: 'devolucion',
        detalles: [{ id_detalle: updated.body.data.detalles[0].id, cantidad: 1 }],
      } as never,
      ctx,
    );
    await stack.admin.request(returnsAdminSubjects, 'returns.admin.annul', { empresa_id: a.id, id_devolucion: devolucion.id }, ctx);

    // Published as processing; then the same order, modified later, cancelled.
    await woo(integracion.path, 'order.updated', published('woocommerce/order-727.json', WOO_727_SKUS));
    const [platformSale] = await stack.query<{ id: number }>("select id from sales.ventas where referencia_externa = 'woo-727'");
    const cancelled = published('woocommerce/order-727-updated-completed.json', [
      ...WOO_727_SKUS,
      ['"status": "completed"', '"status": "cancelled"'],
    ]);
    await woo(integracion.path, 'order.updated', cancelled);
    await woo(`${integracion.path}/producto`, 'product.updated', published('woocommerce/product-simple.json', WOO_794_MANAGED));

    // One group per operation, in the order they were made; the products of one operation in id order.
    const expected = [
      [['venta', 'reserva', mouse, -2, idVenta, null, null, null]],
      [['actualizacion_venta', 'ajuste', mouse, -1, idVenta, null, null, null]],
      [['devolucion', 'ajuste', mouse, 1, null, devolucion.id, null, null]],
      [['anulacion_devolucion', 'ajuste', mouse, -1, null, devolucion.id, null, null]],
      [
        ['venta', 'reserva', laptop, -2, platformSale!.id, null, 'woocommerce', '727'],
        ['venta', 'reserva', cemento, -1, platformSale!.id, null, 'woocommerce', '727'],
      ],
      [
        ['anulacion_venta', 'ajuste', laptop, 2, platformSale!.id, null, 'woocommerce', '727'],
        ['anulacion_venta', 'ajuste', cemento, 1, platformSale!.id, null, 'woocommerce', '727'],
      ],
      [['webhook', 'ajuste', mouse, 53, null, null, 'woocommerce', null]],
    ].map((group) => group.sort((x, y) => (x[2] as number) - (y[2] as number)));
    let changes: any[] = [];
    await eventually(async () => {
      changes = await stockChanges();
      expect(changes).toHaveLength(expected.flat().length);
    }, 20_000);
    const rows = changes.map((d) => [
      d.origen,
      d.motivo,
      d.id_producto,
      d.cambio,
      d.id_venta,
      d.id_devolucion,
      d.plataforma,
      d.id_pedido_plataforma,
    ]);
    let at = 0;
    const groups = expected.map((group) => rows.slice(at, (at += group.length)).sort((x, y) => x[2] - y[2]));
    expect(groups).toEqual(expected);
    // The operation's key stays beside its cause.
    expect(changes.every((d) => typeof d.referencia === 'string')).toBe(true);

    expect((await call('GET', `/sales/${idVenta}`)).body.data.id).toBe(idVenta);
    expect((await call('GET', `/returns/${devolucion.id}`)).body.data).toMatchObject({ id: devolucion.id, id_venta: idVenta });
    expect((await call('GET', `/sales/${platformSale!.id}`)).body.data).toMatchObject({
      referencia_externa: 'woo-727',
      estado: 'Anulada',
    });
  });
});
