import type { SeedOutput, WebhookToken } from '@erp/admin';
import { returnsAdminSubjects } from '@erp/contracts';
import { eventually } from '@erp/testing';
import { Stack, json } from '../support/stack';
import { API, SALES_KEY_A, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { wooHeaders, wooOrder, wooProduct } from '../../services/webhook-ingest/test/platform.factories';
import { deliver } from '../support/webhook-fixture';

/* eslint-disable @typescript-eslint/no-explicit-any */

const WOO_SECRET = 'wc_secret_stock_cause';
const ctx = { requestId: 'stock-cause' };

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
  const woo = async (path: string, topic: string, payload: unknown) => {
    const body = JSON.stringify(payload);
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

    const order = (status: string, modified: string) =>
      wooOrder({
        id: 9301,
        status,
        date_modified_gmt: modified,
        line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '575.21', total_tax: '74.78' }],
      });
    await woo(integracion.path, 'order.updated', order('processing', '2026-04-06T10:00:00'));
    const [platformSale] = await stack.query<{ id: number }>("select id from sales.ventas where referencia_externa = 'woo-9301'");
    await woo(integracion.path, 'order.updated', order('cancelled', '2026-04-06T11:00:00'));
    await woo(
      `${integracion.path}/producto`,
      'product.updated',
      wooProduct({ id: 4001, name: 'Mouse', sku: 'MOU-01', regular_price: '19.95', stock_quantity: 200 }),
    );

    const expected = [
      ['venta', 'reserva', mouse, -2, idVenta, null, null, null],
      ['actualizacion_venta', 'ajuste', mouse, -1, idVenta, null, null, null],
      ['devolucion', 'ajuste', mouse, 1, null, devolucion.id, null, null],
      ['anulacion_devolucion', 'ajuste', mouse, -1, null, devolucion.id, null, null],
      ['venta', 'reserva', laptop, -1, platformSale!.id, null, 'woocommerce', '9301'],
      ['anulacion_venta', 'ajuste', laptop, 1, platformSale!.id, null, 'woocommerce', '9301'],
      ['webhook', 'ajuste', mouse, 53, null, null, 'woocommerce', null],
    ];
    let changes: any[] = [];
    await eventually(async () => {
      changes = await stockChanges();
      expect(changes).toHaveLength(expected.length);
    }, 20_000);
    expect(
      changes.map((d) => [d.origen, d.motivo, d.id_producto, d.cambio, d.id_venta, d.id_devolucion, d.plataforma, d.id_pedido_plataforma]),
    ).toEqual(expected);
    // The operation's key stays beside its cause.
    expect(changes.every((d) => typeof d.referencia === 'string')).toBe(true);

    expect((await call('GET', `/sales/${idVenta}`)).body.data.id).toBe(idVenta);
    expect((await call('GET', `/returns/${devolucion.id}`)).body.data).toMatchObject({ id: devolucion.id, id_venta: idVenta });
    expect((await call('GET', `/sales/${platformSale!.id}`)).body.data).toMatchObject({
      referencia_externa: 'woo-9301',
      estado: 'Anulada',
    });
  });
});
