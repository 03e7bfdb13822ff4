import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { inventorySubjects, webhookSubjects } from '@erp/contracts';
import { Stack, json } from '../support/stack';
import { deliver, webhookStore } from '../support/webhook-fixture';
import { published, shopifyHeaders, wooHeaders } from '../../services/webhook-ingest/test/platform.factories';

/**
 * The payloads WooCommerce and Shopify publish (services/webhook-ingest/test/fixtures/platforms,
 * sources in its README), delivered signed and unchanged but for ids and SKUs (and, where a test
 * says so, the status it is about), must become the sale the shop sold: total to the cent, the
 * product its SKU names on every line, stock moved for goods only and once.
 */
const KEY = 'test_key_platform_orders_0123456789';
const WOO_SECRET = 'wc_secret_platform_orders';
const SHOP_SECRET = 'shpss_platform_orders_secret';

const product = (ref: string, codigo: string, nombre: string, tipo: 'Producto' | 'Servicio' = 'Producto') => ({
  ref,
  codigo,
  nombre,
  tipo,
  precio: 10,
  enable: 1,
  inventarios: tipo === 'Producto' ? [{ bodega: 'principal', stock: 50 }] : [],
});

function fixture(): unknown {
  return webhookStore({
    nombre: 'Tienda Publicada S.A.',
    key: KEY,
    vender_sin_stock: true,
    productos: [
      product('premium', 'PREM-93', 'Premium Quality'),
      product('bar3', 'Bar3', 'Ship Your Idea'),
      product('suscripcion', 'SUB-1027', 'Suscripción mensual'),
      product('frutas', 'FRUTA-52', 'Fruits Basket'),
      product('album', 'ALB-87', 'Woo Album #2'),
      product('poster', 'POS-34', 'Woo Poster'),
      product('aviator', 'SKU2006-001', 'Aviator sunglasses'),
      product('lounger', 'SKU2006-020', 'Mid-century lounger'),
      product('mesa', 'SKU2006-035', 'Coffee table'),
      product('estuche', 'CASE-LEATHER-PREM', 'Premium Leather Case'),
      product('plan', 'LENS-PROTECT-2YR', 'Lens Protection Plan (2 Year)', 'Servicio'),
      product('verde', 'IPOD2008GREEN', 'IPod Nano - 8GB verde'),
      product('rojo', 'IPOD2008RED', 'IPod Nano - 8GB rojo'),
      product('negro', 'IPOD2008BLACK', 'IPod Nano - 8GB negro'),
      product('ipod2009', 'IPOD2009BLACK', 'IPod Nano 2009'),
    ],
    integraciones: [
      { ref: 'woo', plataforma: 'woocommerce', secreto: WOO_SECRET },
      { ref: 'shop', plataforma: 'shopify', secreto: SHOP_SECRET },
    ],
  });
}

/** WooCommerce's published orders carry no SKU on some lines: these edits give them ours. */
const WOO_727_SKUS: Array<[string, string]> = [['"sku": "",\n      "price": 3', '"sku": "PREM-93",\n      "price": 3']];
/** Shopify publishes one body for every order topic: a voided, cancelled order. The paid order is that body, paid and not cancelled. */
const SHOPIFY_PAID: Array<[string, string]> = [
  ['"financial_status": "voided"', '"financial_status": "paid"'],
  ['"cancelled_at": "2021-12-31T19:00:00-05:00"', '"cancelled_at": null'],
  ['"cancel_reason": "customer"', '"cancel_reason": null'],
];
const SHOPIFY_ORDER_ID = '820982911946154508';

interface SaleLine {
  id_producto: number;
  cantidad: number;
  total: number;
}

describe('platform orders as the platforms publish them', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let integ: Record<string, WebhookToken>;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns', 'webhook-ingest'] });
    seeded = await stack.seed(fixture());
    integ = seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>;
  });
  afterAll(async () => {
    await stack.stop();
  });

  const id = (ref: string) => (seeded.empresas.tienda!.productos as Record<string, number>)[ref]!;
  const stockOf = async (ref: string) => {
    const res = await stack.api(`/api/external/v1/inventory/${id(ref)}`, { key: KEY });
    return (await json(res)).data.inventarios[0]?.stock as number;
  };
  const stocks = async (...refs: string[]) => Object.fromEntries(await Promise.all(refs.map(async (r) => [r, await stockOf(r)])));
  const saleOf = async (referencia: string) => {
    const rows = await stack.query<{ id: number }>('select id from sales.ventas where referencia_externa = $1', [referencia]);
    expect(rows).toHaveLength(1);
    const res = await stack.api(`/api/external/v1/sales/${rows[0]!.id}`, { key: KEY });
    return (await json(res)).data as {
      id: number;
      estado: string;
      total: number;
      id_cliente: number | null;
      observaciones: string | null;
      detalles: SaleLine[];
    };
  };
  const envio = async () => {
    const [row] = await stack.query<{ id: number; tipo: string }>(
      "select id, tipo from inventory.productos where codigo = 'ENVIO' and empresa_id = $1",
      [seeded.empresas.tienda!.id],
    );
    return row!;
  };
  const settled = async (idEntrega: number, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await stack.query<{ estado: string; motivo: string | null; id_venta: number | null }>(
        'select estado, motivo, id_venta from webhook_ingest.entregas where id = $1',
        [idEntrega],
      );
      if (row && row.estado !== 'recibida') return row;
      if (Date.now() > until) throw new Error(`delivery ${idEntrega} not processed in time`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const sendWoo = async (body: string, topic = 'order.updated', route = integ.woo!.path) => {
    const res = await deliver(stack.baseUrl, route, body, wooHeaders(body, topic, WOO_SECRET));
    expect(res.status).toBe(200);
    const receipt = (await json(res)) as { estado: string; id_entrega: number };
    expect(receipt.estado).toBe('recibida');
    return settled(receipt.id_entrega);
  };
  const sendShopify = async (body: string, topic: string) => {
    const res = await deliver(stack.baseUrl, integ.shop!.path, body, shopifyHeaders(body, topic, SHOP_SECRET));
    expect(res.status).toBe(200);
    const receipt = (await json(res)) as { estado: string; id_entrega: number };
    expect(receipt.estado).toBe('recibida');
    return settled(receipt.id_entrega);
  };
  const lineTotals = (sale: { detalles: SaleLine[] }) => sale.detalles.map((d) => [d.id_producto, d.cantidad, d.total]);

  describe('WooCommerce', () => {
    it('order 727 is a sale of 29.35: its two lines, and its flat-rate shipping as the ENVIO service, which moves no stock', async () => {
      const before = await stocks('premium', 'bar3');
      const processed = await sendWoo(published('woocommerce/order-727.json', WOO_727_SKUS));
      expect(processed).toMatchObject({ estado: 'procesada', id_venta: expect.any(Number) });

      const sale = await saleOf('woo-727');
      const servicio = await envio();
      expect(servicio.tipo).toBe('Servicio');
      expect(sale.total).toBe(29.35);
      expect(lineTotals(sale)).toEqual([
        [id('premium'), 2, 6.45],
        [id('bar3'), 1, 12.9],
        [servicio.id, 1, 10],
      ]);
      expect(sale.observaciones).toContain('Flat Rate');
      const [cliente] = await stack.query<{ email: string; nombre: string }>('select email, nombre from sales.clientes where id = $1', [
        sale.id_cliente,
      ]);
      expect(cliente).toEqual({ email: 'john.doe@example.com', nombre: 'John Doe' });
      expect(await stocks('premium', 'bar3')).toEqual({ premium: before.premium - 2, bar3: before.bar3 - 1 });
      const moves = await stack.query<{ n: number }>('select count(*)::int as n from inventory.movimientos where producto_id = $1', [
        servicio.id,
      ]);
      expect(moves[0]!.n).toBe(0);
    });

    it('the same order completed later changes nothing; cancelled within the same second as that update, the sale is annulled and its stock returned', async () => {
      const before = await stocks('premium', 'bar3');
      const completed = published('woocommerce/order-727-updated-completed.json', WOO_727_SKUS);
      expect(await sendWoo(completed)).toMatchObject({ estado: 'procesada', motivo: 'La venta del pedido ya existía' });
      expect(await stocks('premium', 'bar3')).toEqual(before);

      // Same `date_modified_gmt` as the completion: a gateway or an admin changed it within the second.
      const cancelled = await sendWoo(
        published('woocommerce/order-727-updated-completed.json', [...WOO_727_SKUS, ['"status": "completed"', '"status": "cancelled"']]),
      );
      expect(cancelled).toMatchObject({ estado: 'procesada', motivo: 'Venta anulada' });
      expect((await saleOf('woo-727')).estado).toBe('Anulada');
      expect(await stocks('premium', 'bar3')).toEqual({ premium: before.premium + 2, bar3: before.bar3 + 1 });
    });

    it('a cancellation processed before an update of the same second wins: the update brings no sale back', async () => {
      const at = (status: string) =>
        published('woocommerce/order-727.json', [
          ...WOO_727_SKUS,
          ['"id": 727,', '"id": 7270,'],
          ['"status": "processing"', `"status": "${status}"`],
        ]);
      expect(await sendWoo(at('cancelled'))).toMatchObject({ estado: 'ignorada' });
      expect(await sendWoo(at('processing'))).toMatchObject({ estado: 'ignorada', motivo: expect.stringContaining('cancelado') });
      expect(await stack.query("select id from sales.ventas where referencia_externa = 'woo-7270'")).toEqual([]);
    });

    it('an order with prices including tax (order 1274) is a sale of its total, 26.09', async () => {
      const processed = await sendWoo(
        published('woocommerce/order-1274-prices-include-tax-subscriptions-docs.json', [['"sku": "",', '"sku": "SUB-1027",']]),
      );
      expect(processed).toMatchObject({ estado: 'procesada' });
      const sale = await saleOf('woo-1274');
      expect(sale.total).toBe(26.09);
      expect(lineTotals(sale)).toEqual([[id('suscripcion'), 3, 26.09]]);
    });

    it('an order with a coupon (order 963) is a sale of 31.20 at the discounted line amounts, once replayed after its missing product is added', async () => {
      const body = published('woocommerce/order-963-coupon-wcios-fixture.json', [['"sku": "",', '"sku": "FRUTA-52",']], { unwrap: 'data' });
      const failed = await sendWoo(body.replace('"sku": "5555-A"', '"sku": "NEW-5555"'));
      expect(failed).toMatchObject({ estado: 'fallida', motivo: expect.stringContaining('NEW-5555') });
      const [entrega] = await stack.query<{ id: number }>(
        "select id from webhook_ingest.entregas where referencia = 'woo-963' and estado = 'fallida'",
      );

      // Fixed at the source: the store's SKU is now one of ours (the replay reprocesses the stored body).
      await stack.admin.request(
        inventorySubjects,
        'inventory.admin.seed',
        { empresa_id: seeded.empresas.tienda!.id, productos: [{ ref: 'nuevo', nombre: 'Fruits Bundle', codigo: 'NEW-5555', precio: 10 }] },
        { requestId: 'platform-orders' },
      );
      await stack.admin.request(
        webhookSubjects,
        'webhooks.admin.delivery.replay',
        { ids: [entrega!.id] },
        { requestId: 'platform-orders' },
      );
      expect(await settled(entrega!.id)).toMatchObject({ estado: 'procesada' });
      const sale = await saleOf('woo-963');
      expect(sale.total).toBe(31.2);
      expect(sale.detalles.map((d) => d.total)).toEqual([31.2, 0]);
    });

    it('a variation without SKU (order 729) is the product its product.updated delivery created and mapped', async () => {
      const variation = published('woocommerce/product-variation.json', [
        ['"id": 732,', '"id": 24,'],
        ['"sku": "",', '"sku": "BAR-24",'],
      ]);
      expect(await sendWoo(variation, 'product.updated', `${integ.woo!.path}/producto`)).toMatchObject({ estado: 'procesada' });
      const [creado] = await stack.query<{ id: number; precio: string }>(
        "select id, precio::numeric(20, 2)::text as precio from inventory.productos where codigo = 'BAR-24'",
      );
      expect(creado!.precio).toBe('9.00');

      expect(await sendWoo(published('woocommerce/order-729-two-variations-same-product.json'))).toMatchObject({ estado: 'procesada' });
      const sale = await saleOf('woo-729');
      expect(sale.total).toBe(54.4);
      expect(lineTotals(sale).slice(0, 2)).toEqual([
        [id('bar3'), 1, 12.9],
        [creado!.id, 1, 21.5],
      ]);
    });

    it('a simple product (794) creates our product at its price, enabled, its stock untouched (not managed)', async () => {
      const body = published('woocommerce/product-simple.json', [['"sku": "",', '"sku": "CAM-794",']]);
      expect(await sendWoo(body, 'product.updated', `${integ.woo!.path}/producto`)).toMatchObject({ estado: 'procesada' });
      const rows = await stack.query<{ nombre: string; precio: string; enable: number; n: number }>(
        "select p.nombre, p.precio::numeric(20, 2)::text as precio, p.enable, (select count(*)::int from inventory.movimientos m where m.producto_id = p.id) as n from inventory.productos p where codigo = 'CAM-794'",
      );
      expect(rows).toEqual([{ nombre: 'Premium Quality', precio: '21.99', enable: true, n: 0 }]);
    });

    it('an order with refunds that carry no lines (order 723) is a sale of 39.00; the refunds are noted, not guessed', async () => {
      const processed = await sendWoo(
        published('woocommerce/order-723-refunded-lines.json', [
          ['"sku": "",\n      "price": 9', '"sku": "ALB-87",\n      "price": 9'],
          ['"sku": "",\n      "price": 20', '"sku": "POS-34",\n      "price": 20'],
        ]),
      );
      expect(processed).toMatchObject({ estado: 'procesada', motivo: expect.stringContaining('Reembolso 726 de 10.00 sin líneas') });
      expect((await saleOf('woo-723')).total).toBe(39);
      expect(await stack.query("select id from returns.devoluciones where referencia like 'woo-723%'")).toEqual([]);
    });
  });

  describe('Shopify', () => {
    it('the published order, paid, is a sale of its total_price 404.95: each line the product its SKU names, shipping as ENVIO, the order discount spread', async () => {
      const before = await stocks('aviator', 'lounger', 'mesa', 'estuche');
      const processed = await sendShopify(published('shopify/webhook-orders-paid.json', SHOPIFY_PAID), 'orders/paid');
      expect(processed).toMatchObject({ estado: 'procesada' });
      const sale = await saleOf(`shop-${SHOPIFY_ORDER_ID}`);
      expect(sale.total).toBe(404.95);
      expect(sale.detalles.map((d) => d.id_producto)).toEqual([
        id('aviator'),
        id('plan'),
        id('estuche'),
        id('lounger'),
        id('mesa'),
        (await envio()).id,
      ]);
      expect(sale.detalles.reduce((s, d) => s + Math.round(d.total * 100), 0)).toBe(40_495);
      expect(sale.observaciones).toContain('Descuento del pedido de 20.00');
      const [cliente] = await stack.query<{ email: string; nombre: string }>('select email, nombre from sales.clientes where id = $1', [
        sale.id_cliente,
      ]);
      expect(cliente).toEqual({ email: 'jon@example.com', nombre: 'John Smith' });
      // Goods move; the protection plan and the shipping are services.
      expect(await stocks('aviator', 'lounger', 'mesa', 'estuche')).toEqual({
        aviator: before.aviator - 1,
        lounger: before.lounger - 1,
        mesa: before.mesa - 1,
        estuche: before.estuche - 1,
      });
    });

    it('lines sharing one product_id without variants keep their own products, whatever mapping was stored before', async () => {
      // What the platform id pointed at when the last of those lines decided it.
      await stack.query(
        "insert into webhook_ingest.mapeos_producto (empresa_id, plataforma, id_externo, producto_id) values ($1, 'shopify', '788032119674292922', $2) on conflict (empresa_id, plataforma, id_externo) do update set producto_id = excluded.producto_id",
        [seeded.empresas.tienda!.id, id('mesa')],
      );
      const before = await stocks('aviator', 'lounger', 'mesa');
      const second = published('shopify/webhook-orders-paid.json', [
        ...SHOPIFY_PAID,
        [`"id": ${SHOPIFY_ORDER_ID}`, '"id": 820982911946154509'],
      ]);
      expect(await sendShopify(second, 'orders/paid')).toMatchObject({ estado: 'procesada' });
      const sale = await saleOf('shop-820982911946154509');
      expect(sale.detalles.slice(0, 5).map((d) => d.id_producto)).toEqual([
        id('aviator'),
        id('plan'),
        id('estuche'),
        id('lounger'),
        id('mesa'),
      ]);
      expect(await stocks('aviator', 'lounger', 'mesa')).toEqual({
        aviator: before.aviator - 1,
        lounger: before.lounger - 1,
        mesa: before.mesa - 1,
      });
    });

    it('the published cancellation annuls the sale and returns the goods', async () => {
      const before = await stocks('aviator', 'lounger', 'mesa', 'estuche');
      const cancelled = published('shopify/webhook-orders-cancelled.json', [[`"id": ${SHOPIFY_ORDER_ID}`, '"id": 820982911946154509']]);
      expect(await sendShopify(cancelled, 'orders/cancelled')).toMatchObject({ estado: 'procesada', motivo: 'Venta anulada' });
      expect((await saleOf('shop-820982911946154509')).estado).toBe('Anulada');
      expect(await stocks('aviator', 'lounger', 'mesa', 'estuche')).toEqual({
        aviator: before.aviator + 1,
        lounger: before.lounger + 1,
        mesa: before.mesa + 1,
        estuche: before.estuche + 1,
      });
    });

    it('the published refund (no restock) becomes one money-only return, also when delivered again; the cancellation then returns what the refund left (the shipping)', async () => {
      const before = await stocks('aviator', 'lounger', 'mesa', 'estuche');
      const refund = published('shopify/webhook-refunds-create.json');
      const first = await sendShopify(refund, 'refunds/create');
      expect(first).toMatchObject({ estado: 'procesada', motivo: expect.stringContaining('sin reposición de stock') });
      expect(await sendShopify(refund, 'refunds/create')).toMatchObject({ estado: 'procesada' });
      const returns = await stack.query<{ tipo: string; total: string }>(
        `select tipo, total::text from returns.devoluciones where referencia like 'shop-${SHOPIFY_ORDER_ID}-reembolso-%'`,
      );
      expect(returns).toEqual([{ tipo: 'descuento_ajuste', total: expect.any(String) }]);
      expect(await stocks('aviator', 'lounger', 'mesa', 'estuche')).toEqual(before);

      // A sale with returns cannot be annulled: what is left of it comes back as one more return.
      const cancelled = await sendShopify(published('shopify/webhook-orders-cancelled.json'), 'orders/cancelled');
      expect(cancelled).toMatchObject({ estado: 'procesada', motivo: expect.stringContaining('por lo que quedaba de la venta') });
      const all = await stack.query<{ tipo: string; producto: number }>(
        `select d.tipo, l.id_producto as producto from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id where d.referencia = 'shop-${SHOPIFY_ORDER_ID}-anulacion'`,
      );
      expect(all).toEqual([{ tipo: 'anulacion_factura', producto: (await envio()).id }]);
      expect(await stocks('aviator', 'lounger', 'mesa', 'estuche')).toEqual(before);
    });

    it('an order with discount allocations and tax lines, partially refunded with restock (order 450789469), is a sale of 598.94 and a return of the refunded lines with their stock', async () => {
      const before = await stocks('verde', 'rojo', 'negro');
      const processed = await sendShopify(
        published('shopify/order-450789469-rest-list.json', [], { unwrap: 'orders.0' }),
        'orders/updated',
      );
      expect(processed).toMatchObject({ estado: 'procesada', motivo: expect.stringContaining('con reposición de stock') });
      const sale = await saleOf('shop-450789469');
      expect(sale.total).toBe(598.94);
      expect(lineTotals(sale)).toEqual([
        [id('verde'), 1, 199.64],
        [id('rojo'), 1, 199.65],
        [id('negro'), 1, 199.65],
      ]);
      const returns = await stack.query<{ tipo: string; total: string }>(
        "select tipo, total::text from returns.devoluciones where referencia = 'shop-450789469-reembolso-509562969'",
      );
      expect(returns).toEqual([{ tipo: 'devolucion', total: '399.29' }]);
      // Sold one of each, got the green and the black back.
      expect(await stocks('verde', 'rojo', 'negro')).toEqual({ verde: before.verde, rojo: before.rojo - 1, negro: before.negro });
    });

    it('an order with a percentage discount allocated to its line (order 1073459963) is a sale of 181.09', async () => {
      expect(
        await sendShopify(
          published('shopify/order-1073459963-rest-create-percentage-discount.json', [], { unwrap: 'order' }),
          'orders/create',
        ),
      ).toMatchObject({ estado: 'procesada' });
      expect(lineTotals(await saleOf('shop-1073459963'))).toEqual([[id('ipod2009'), 1, 181.09]]);
    });

    it('custom lines with neither SKU nor product (order 1073459968) keep the delivery failed, naming each line', async () => {
      const failed = await sendShopify(
        published('shopify/order-1073459968-rest-create-custom-lines-two-taxes.json', [], { unwrap: 'order' }),
        'orders/create',
      );
      expect(failed.estado).toBe('fallida');
      expect(failed.motivo).toMatch(/sin SKU y sin producto vinculado.*sin SKU y sin producto vinculado.*sin SKU y sin producto vinculado/);
    });
  });
});
