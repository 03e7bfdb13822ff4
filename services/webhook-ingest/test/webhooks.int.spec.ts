import { jetstreamManager } from '@nats-io/jetstream';
import type { Bus } from '@erp/bus';
import {
  AppError,
  inventorySubjects,
  salesApiSubjects,
  salesPlatformSubjects,
  streamName,
  webhookGatewaySubjects,
  webhookSubjects,
  type ResolvedProduct,
  type SaleCreateRequest,
  type SaleInput,
} from '@erp/contracts';
import { eventually, harness, tenant, type Harness } from '@erp/testing';
import type { CatalogPort } from '../src';
import { published, shopifyHeaders, shopifyOrderBody, wooHeaders, wooOrder, wooPing, wooProduct } from './platform.factories';
import { receive as receiveOn, startWebhookIngest } from './webhook-ingest.factories';

const SECRET = 'woo-secret-0123456789';
const EMPRESA = tenant(7, { nombre: 'Empresa Siete', venderSinStock: false }).empresa;

/** Stand-ins for the services processing asks: the gateway (context), inventory and sales. */
class Fakes {
  products = new Map<string, ResolvedProduct>();
  sales = new Map<string, { id: number; estado: 'Completada' | 'Pendiente'; anulada: boolean }>();
  customers = new Map<string, number>();
  creates: Array<Record<string, unknown>> = [];
  /** The size of each `sales.batch.create` asked. */
  batches: number[] = [];
  annuls: number[] = [];
  adjusts: Array<Record<string, unknown>> = [];
  catalogUpdates: Array<{ id: number; changes: Record<string, unknown> }> = [];
  inventoryDown = false;

  product(id: number, codigo: string, over: Partial<ResolvedProduct> = {}): void {
    this.products.set(codigo, {
      id,
      codigo,
      barcode: null,
      nombre: `Producto ${codigo}`,
      descripcion: null,
      marca: null,
      tipo: 'Producto',
      enable: 1,
      precio: '10.00',
      costo: '5.00',
      costo_promedio: '5.00',
      porcentaje_impuesto: null,
      stock: null,
      ...over,
    });
  }

  sale(id: number, referencia: string, estado: string): SaleInput {
    const now = new Date().toISOString();
    return {
      id,
      fecha: '2026-03-12',
      correlativo: String(id),
      referencia: null,
      referencia_externa: referencia,
      cotizacion: false,
      estado: estado as SaleInput['estado'],
      forma_pago: 'Efectivo',
      total: 0,
      iva: 0,
      sub_total: 0,
      descuento: 0,
      exenta: 0,
      monto_pago: null,
      cambio: 0,
      saldo: null,
      nombre_cliente: 'Consumidor Final',
      nombre_usuario: 'Tienda',
      nombre_vendedor: null,
      id_sucursal: 1,
      id_bodega: 2,
      id_documento: 3,
      nombre_documento: 'Factura',
      id_canal: null,
      id_cliente: null,
      fecha_expiracion: null,
      observaciones: null,
      documento_fiscal_emitido: false,
      created_at: now,
      updated_at: now,
      detalles: [],
    };
  }

  serve(bus: Bus): void {
    bus.serve(
      webhookGatewaySubjects,
      { 'gateway.webhook.context': async ({ usuario_id }) => ({ empresa: EMPRESA, usuario: { id: usuario_id, nombre: 'Tienda' } }) },
      { queue: 'gateway' },
    );
    bus.serve(
      {
        'inventory.product.resolve': inventorySubjects['inventory.product.resolve'],
        'inventory.stock.adjust': inventorySubjects['inventory.stock.adjust'],
      },
      {
        'inventory.product.resolve': async ({ items }) => {
          if (this.inventoryDown) throw new AppError('UNAVAILABLE', 'Servicio no disponible (inventory)');
          return {
            bodega: null,
            items: items.map((q) => {
              const found = 'codigo' in q ? this.products.get(q.codigo) : [...this.products.values()].find((p) => p.id === q.id_producto);
              return found
                ? { ok: true as const, producto: found }
                : { ok: false as const, message: 'No existe un producto con ese código' };
            }),
          };
        },
        'inventory.stock.adjust': async (req) => {
          this.adjusts.push(req);
          return { clave: req.clave, aplicado: true, movimientos: [] };
        },
      },
      { queue: 'inventory' },
    );
    const create = (req: SaleCreateRequest) => {
      this.creates.push(req);
      const ref = req.referencia_externa!;
      const existing = this.sales.get(ref);
      if (existing) return { venta: this.sale(existing.id, ref, existing.estado), idempotent: true };
      const id = this.sales.size + 100;
      this.sales.set(ref, { id, estado: req.estado === 'Pendiente' ? 'Pendiente' : 'Completada', anulada: false });
      return { venta: this.sale(id, ref, 'Completada'), idempotent: false };
    };
    bus.serve(
      { 'sales.create': salesApiSubjects['sales.create'], 'sales.batch.create': salesApiSubjects['sales.batch.create'] },
      {
        'sales.create': async (req) => create(req),
        'sales.batch.create': async ({ ventas }) => {
          this.batches.push(ventas.length);
          return { resultados: ventas.map(({ indice, venta }) => ({ indice, ...create(venta) })) };
        },
      },
      { queue: 'sales' },
    );
    bus.serve(
      salesPlatformSubjects,
      {
        'sales.sale.annul': async ({ id_venta }) => {
          this.annuls.push(id_venta);
          const entry = [...this.sales.entries()].find(([, s]) => s.id === id_venta)!;
          entry[1].anulada = true;
          return this.sale(id_venta, entry[0], 'Anulada');
        },
        'sales.customer.find-or-create': async ({ email }) => {
          const known = this.customers.get(email);
          if (known) return { id: known, creado: false };
          this.customers.set(email, this.customers.size + 500);
          return { id: this.customers.size + 499, creado: true };
        },
        'sales.sale.by-reference': async ({ referencia_externa }) => {
          const sale = this.sales.get(referencia_externa);
          return sale ? { id: sale.id, estado: sale.anulada ? ('Anulada' as const) : sale.estado } : null;
        },
      },
      { queue: 'sales' },
    );
  }
}

describe('webhook-ingest against Postgres and NATS', () => {
  let h: Harness<unknown>;
  const fakes = new Fakes();
  const catalog: CatalogPort = {
    updateProducto: async (_ctx, id, changes) => void fakes.catalogUpdates.push({ id, changes }),
    createProducto: async (_ctx, p) => {
      fakes.product(500 + fakes.products.size, p.codigo, { nombre: p.nombre, precio: p.precio, ...(p.tipo ? { tipo: p.tipo } : {}) });
      return fakes.products.get(p.codigo)!.id;
    },
  };
  let woo: { id: number; token: string };
  let shop: { id: number; token: string };

  beforeAll(async () => {
    h = await harness('webhooks');
    fakes.serve(h.bus);
    // Four attempts (0.5 s, 1 s, 2 s apart) so that giving up on a delivery fits in a test.
    await startWebhookIngest(h, { WEBHOOK_MAX_ATTEMPTS: 4 }, { deps: { catalog } });
    const seeded = await h.bus.request(
      webhookSubjects,
      'webhooks.admin.seed',
      {
        empresa_id: EMPRESA.id,
        refs: {
          usuarios: { tienda: 11 },
          sucursales: { centro: 1 },
          bodegas: { principal: 2 },
          documentos: { factura: 3 },
          canales: { web: 4 },
        },
        integraciones: [
          {
            ref: 'woo',
            plataforma: 'woocommerce',
            usuario: 'tienda',
            sucursal: 'centro',
            bodega: 'principal',
            documento: 'factura',
            canal: 'web',
            secreto: SECRET,
          },
          { ref: 'shop', plataforma: 'shopify', usuario: 'tienda', sucursal: 'centro', bodega: 'principal', documento: 'factura' },
        ],
      },
      { requestId: 'seed' },
    );
    woo = seeded.integraciones.woo!;
    shop = seeded.integraciones.shop!;
  });

  afterAll(() => h?.close());

  const receive = (
    plataforma: 'woocommerce' | 'shopify',
    token: string,
    body: string,
    headers: Record<string, string>,
    recurso: 'pedido' | 'producto' = 'pedido',
  ) => receiveOn(h.bus, plataforma, token, body, headers, recurso);

  const entrega = async (id: number) => (await h.pool.query('select * from webhook_ingest.entregas where id = $1', [id])).rows[0];
  /** The delivery once processing has settled it (any state but recibida). */
  const settled = (id: number, timeoutMs = 15_000) =>
    eventually(async () => {
      const row = await entrega(id);
      if (row.estado === 'recibida') throw new Error(`delivery ${id} still waiting`);
      return row;
    }, timeoutMs);
  const wooDelivery = (payload: unknown, topic = 'order.updated', secret: string | undefined = SECRET) => {
    const body = JSON.stringify(payload);
    return { body, headers: wooHeaders(body, topic, secret) };
  };

  it('stores tokens hashed only', async () => {
    const rows = (await h.pool.query('select token_hash, token_prefix from webhook_ingest.integraciones order by id')).rows;
    expect(rows).toHaveLength(2);
    expect(JSON.stringify(rows)).not.toContain(woo.token);
    expect(rows[0].token_hash).toHaveLength(32);
  });

  it('refuses to seed an integration with a field it does not know, a shop without its credentials, or a shop API without a sealing key', async () => {
    const base = { ref: 'x', plataforma: 'woocommerce', usuario: 'tienda', sucursal: 'centro', bodega: 'principal', documento: 'factura' };
    const refs = { usuarios: { tienda: 11 }, sucursales: { centro: 1 }, bodegas: { principal: 2 }, documentos: { factura: 3 } };
    const seed = (integracion: Record<string, unknown>) =>
      h.bus.request(
        webhookSubjects,
        'webhooks.admin.seed',
        { empresa_id: EMPRESA.id, refs, integraciones: [integracion as never] },
        { requestId: 'seed' },
      );
    // The refusal names what is wrong: in its message or its details per field.
    const refusal = async (integracion: Record<string, unknown>): Promise<string> => {
      const err = await seed(integracion).then(
        () => undefined,
        (e: unknown) => e as AppError,
      );
      expect(err?.code).toBe('VALIDATION_FAILED');
      return JSON.stringify({ message: err!.message, details: err!.details });
    };
    expect(await refusal({ ...base, tiendas: { url: 'https://shop.example' } })).toContain('tiendas');
    expect(await refusal({ ...base, tienda: { url: 'https://shop.example', clave: 'ck' } })).toContain('necesita secreto');
    expect(await refusal({ ...base, tienda: { url: 'http://shop.example', clave: 'ck', secreto: 'cs' } })).toContain('HTTPS');
    expect(await refusal({ ...base, plataforma: 'shopify', tienda: { url: 'https://s.example', token: 't', clave: 'ck' } })).toContain(
      'no usa clave',
    );
    expect(await refusal({ ...base, tienda: { url: 'https://shop.example', clave: 'ck', secreto: 'cs' } })).toContain(
      'PLATFORM_CREDENTIALS_KEYS',
    );
    const rows = await h.pool.query('select count(*)::int as n from webhook_ingest.integraciones');
    expect(rows.rows[0].n).toBe(2);
  });

  it('refuses unknown tokens, a token of another platform and bad or missing signatures, and answers the ping', async () => {
    const d = wooDelivery(wooOrder({ id: 1, status: 'processing', line_items: [] }));
    await expect(receive('woocommerce', 'wh_unknown_token_0000000000', d.body, d.headers)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(receive('shopify', woo.token, d.body, d.headers)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(receive('woocommerce', woo.token, d.body, wooHeaders(d.body, 'order.updated', 'wrong-secret'))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    await expect(receive('woocommerce', woo.token, d.body, wooHeaders(d.body, 'order.updated'))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    const ping = wooPing(12);
    await expect(receive('woocommerce', woo.token, ping.body, ping.headers)).resolves.toEqual({ estado: 'ping', id_entrega: null });
    expect((await h.pool.query('select count(*)::int as n from webhook_ingest.entregas')).rows[0].n).toBe(0);
  });

  it('stores the same order delivered 5 times at once, and again later, once: one sale', async () => {
    fakes.product(1, 'LAP-14');
    const d = wooDelivery(
      wooOrder({
        id: 727,
        status: 'processing',
        line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 2, total: '6.00', total_tax: '0.45' }],
      }),
    );
    // Every attempt of WooCommerce carries a new delivery id; the body is the same.
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => receive('woocommerce', woo.token, d.body, wooHeaders(d.body, 'order.updated', SECRET))),
    );
    const ids = new Set(replies.map((r) => r.id_entrega));
    expect(ids.size).toBe(1);
    expect(replies.filter((r) => r.estado === 'recibida')).toHaveLength(1);
    const row = await settled([...ids][0]!);
    expect(row).toMatchObject({ estado: 'procesada', id_venta: 100, referencia: 'woo-727' });
    expect(await receive('woocommerce', woo.token, d.body, wooHeaders(d.body, 'order.updated', SECRET))).toEqual({
      estado: 'duplicada',
      id_entrega: row.id,
    });
    expect(fakes.creates).toHaveLength(1);
    expect(fakes.creates[0]).toMatchObject({
      referencia_externa: 'woo-727',
      estado: 'Completada',
      id_sucursal: 1,
      id_bodega: 2,
      id_documento: 3,
      id_canal: 4,
      permitir_sin_stock: true,
      origen: 'woocommerce',
      detalles: [{ id_producto: 1, cantidad: 2, precio: 3.23, descuento: 0.01 }],
    });
    // The SKU match is remembered as a mapping of the platform's product id.
    expect((await h.pool.query("select producto_id from webhook_ingest.mapeos_producto where id_externo = '93'")).rows).toEqual([
      { producto_id: 1 },
    ]);
  });

  it('makes a burst of new orders in groups: one sale each, a later version after its group, an unprocessable order failing alone', async () => {
    fakes.product(40, 'GRP-01');
    const batchesBefore = fakes.batches.length;
    const order = (id: number, status: string, modified: string, sku = 'GRP-01') =>
      wooDelivery(
        wooOrder({
          id,
          status,
          date_modified_gmt: modified,
          email: `cliente${id % 3}@example.com`,
          line_items: [{ product_id: sku === 'GRP-01' ? 400 : 401, sku, quantity: 1, total: '8.00', total_tax: '1.04' }],
        }),
      );
    const ids = Array.from({ length: 24 }, (_, i) => 9000 + i);
    // Each order twice (one stored), the last one also cancelled later, one with an unknown SKU.
    const orders = ids.map((id) => order(id, 'processing', '2026-03-12T16:00:00', id === 9005 ? 'NO-EXISTE' : 'GRP-01'));
    // A retry of WooCommerce carries a new delivery id; the body is the same.
    const send = (deliveries: typeof orders) =>
      Promise.all(deliveries.map((d) => receive('woocommerce', woo.token, d.body, wooHeaders(d.body, 'order.updated', SECRET))));
    // The cancellation is received after its order (received first, it would leave no sale to make).
    const replies = [...(await send([...orders, ...orders])), ...(await send([order(9023, 'cancelled', '2026-03-12T17:00:00')]))];
    const stored = replies.filter((r) => r.estado === 'recibida').map((r) => r.id_entrega!);
    expect(stored).toHaveLength(ids.length + 1);
    const rows = await Promise.all(stored.map((id) => settled(id)));

    const byRef = (ref: string) => rows.filter((r) => r.referencia === ref);
    expect(byRef('woo-9005')).toMatchObject([{ estado: 'fallida', motivo: expect.stringContaining('NO-EXISTE') }]);
    for (const id of ids.filter((id) => id !== 9005 && id !== 9023))
      expect(byRef(`woo-${id}`)).toMatchObject([{ estado: 'procesada', id_venta: fakes.sales.get(`woo-${id}`)!.id }]);
    // The cancelled version applied after its order's sale was made: annulled once.
    expect(byRef('woo-9023').map((r) => r.estado)).toEqual(['procesada', 'procesada']);
    expect(fakes.sales.get('woo-9023')).toMatchObject({ anulada: true });
    // Each order made one sale, and some were made by batches of several.
    const made = fakes.creates.filter((c) => String(c.referencia_externa).startsWith('woo-90'));
    expect(new Set(made.map((c) => c.referencia_externa)).size).toBe(ids.length - 1);
    expect(fakes.batches.slice(batchesBefore).some((n) => n > 1)).toBe(true);
    // Three customers for 23 orders: each looked up once per group, never once per order.
    expect([...fakes.customers.keys()].filter((e) => /^cliente\d@/.test(e))).toHaveLength(3);
    // Handed over on the intake stream, a work queue that keeps none once processed; the events
    // stream, which the partners' event log reads whole, carried not one of them.
    const jsm = await jetstreamManager(h.bus.nc);
    const intake = await eventually(async () => {
      const info = await jsm.streams.info(streamName(h.iso.subjectPrefix, 'intake'));
      expect(info.state.messages).toBe(0);
      return info;
    });
    expect(intake.config.retention).toBe('workqueue');
    expect(intake.state.last_seq).toBeGreaterThanOrEqual(stored.length);
    const onEvents = (await jsm.streams.info(streamName(h.iso.subjectPrefix), { subjects_filter: '>' })).state.subjects ?? {};
    expect(Object.keys(onEvents).filter((subject) => subject.includes('delivery'))).toEqual([]);
  });

  it('processing → cancelled → stale processing: the sale ends annulled once', async () => {
    fakes.product(2, 'CAM-01');
    const order = (status: string, modified: string) =>
      wooDelivery(
        wooOrder({
          id: 800,
          status,
          date_modified_gmt: modified,
          line_items: [{ product_id: 40, sku: 'CAM-01', quantity: 1, total: '20.00' }],
        }),
      );
    const processing = order('processing', '2026-03-12T10:00:00');
    const first = await receive('woocommerce', woo.token, processing.body, processing.headers);
    expect(await settled(first.id_entrega!)).toMatchObject({ estado: 'procesada' });
    const cancel = order('cancelled', '2026-03-12T11:00:00');
    const second = await receive('woocommerce', woo.token, cancel.body, cancel.headers);
    expect(await settled(second.id_entrega!)).toMatchObject({ estado: 'procesada', motivo: 'Venta anulada' });
    const stale = order('processing', '2026-03-12T10:30:00');
    const third = await receive('woocommerce', woo.token, stale.body, stale.headers);
    expect(await settled(third.id_entrega!)).toMatchObject({ estado: 'ignorada' });
    const saleId = fakes.sales.get('woo-800')!.id;
    expect(fakes.annuls.filter((id) => id === saleId)).toHaveLength(1);
    expect(fakes.creates.filter((c) => c.referencia_externa === 'woo-800')).toHaveLength(1);
    expect((await h.pool.query("select cancelado from webhook_ingest.pedidos where referencia = 'woo-800'")).rows).toEqual([
      { cancelado: true },
    ]);
  });

  it('a cancellation that arrives before the order creates no sale, and the late order stays cancelled', async () => {
    const body = (financial_status: string, cancelled_at: string | null, updated_at: string) =>
      shopifyOrderBody({
        id: '820982911946154508',
        financial_status,
        cancelled_at,
        updated_at,
        line_items: [
          {
            id: '866550311766439020',
            product_id: '632910392',
            variant_id: '808950810',
            sku: 'LAP-14',
            title: 'Laptop',
            quantity: 1,
            price: '199.00',
          },
        ],
      });
    const cancelled = body('voided', '2026-03-12T11:00:00-06:00', '2026-03-12T11:00:00-06:00');
    const a = await receive('shopify', shop.token, cancelled, shopifyHeaders(cancelled, 'orders/cancelled'));
    expect(await settled(a.id_entrega!)).toMatchObject({ estado: 'ignorada', referencia: 'shop-820982911946154508' });
    const created = body('paid', null, '2026-03-12T10:00:00-06:00');
    const b = await receive('shopify', shop.token, created, shopifyHeaders(created, 'orders/create'));
    expect(await settled(b.id_entrega!)).toMatchObject({ estado: 'ignorada' });
    expect(fakes.creates.filter((c) => c.referencia_externa === 'shop-820982911946154508')).toHaveLength(0);
  });

  it('acknowledges Shopify topics other than orders without storing them', async () => {
    const body = JSON.stringify({ id: 632910392, title: 'IPod Nano - 8GB' });
    expect(await receive('shopify', shop.token, body, shopifyHeaders(body, 'products/update'))).toEqual({
      estado: 'ignorada',
      id_entrega: null,
    });
  });

  it('keeps an order with an unknown product as failed, and a replay after the product exists creates the sale once', async () => {
    const d = wooDelivery(
      wooOrder({
        id: 900,
        status: 'completed',
        line_items: [{ product_id: 77, sku: 'NUEVO-1', name: 'Nuevo', quantity: 1, total: '5.00' }],
      }),
    );
    const r = await receive('woocommerce', woo.token, d.body, d.headers);
    const failed = await settled(r.id_entrega!);
    expect(failed).toMatchObject({ estado: 'fallida', motivo: expect.stringContaining('NUEVO-1') });
    const listed = await h.bus.request(webhookSubjects, 'webhooks.admin.delivery.list', { empresa_id: EMPRESA.id }, { requestId: 't' });
    expect(listed.map((e) => e.id)).toContain(r.id_entrega);

    fakes.product(3, 'NUEVO-1');
    const replay = await h.bus.request(webhookSubjects, 'webhooks.admin.delivery.replay', { ids: [r.id_entrega!] }, { requestId: 't' });
    expect(replay).toEqual({ reencoladas: [r.id_entrega] });
    expect(await settled(r.id_entrega!)).toMatchObject({ estado: 'procesada', motivo: null });
    // Replaying again does nothing: the delivery is no longer failed.
    expect(await h.bus.request(webhookSubjects, 'webhooks.admin.delivery.replay', { ids: [r.id_entrega!] }, { requestId: 't' })).toEqual({
      reencoladas: [],
    });
    expect(fakes.creates.filter((c) => c.referencia_externa === 'woo-900')).toHaveLength(1);
  });

  it('retries while inventory is unavailable and processes the delivery when it returns', async () => {
    fakes.inventoryDown = true;
    const d = wooDelivery(
      wooOrder({ id: 950, status: 'processing', line_items: [{ product_id: 41, sku: 'CAM-01', quantity: 1, total: '20.00' }] }),
    );
    const r = await receive('woocommerce', woo.token, d.body, d.headers);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect((await entrega(r.id_entrega!)).estado).toBe('recibida');
    fakes.inventoryDown = false;
    expect(await settled(r.id_entrega!)).toMatchObject({ estado: 'procesada' });
  });

  it('keeps a delivery as failed when its attempts run out, and a replay processes it', async () => {
    fakes.inventoryDown = true;
    // A platform product not mapped yet: matching it needs inventory.
    const d = wooDelivery(
      wooOrder({ id: 960, status: 'processing', line_items: [{ product_id: 42, sku: 'CAM-01', quantity: 1, total: '20.00' }] }),
    );
    const r = await receive('woocommerce', woo.token, d.body, d.headers);
    try {
      expect(await settled(r.id_entrega!)).toMatchObject({
        estado: 'fallida',
        intentos: 4,
        motivo: expect.stringContaining('Sin éxito tras varios intentos'),
      });
    } finally {
      fakes.inventoryDown = false;
    }
    await h.bus.request(webhookSubjects, 'webhooks.admin.delivery.replay', { ids: [r.id_entrega!] }, { requestId: 't' });
    expect(await settled(r.id_entrega!)).toMatchObject({ estado: 'procesada', intentos: 5 });
  });

  it('gives a delivery whose event was lost a new one once WEBHOOK_REQUEUE_AFTER_MS has passed since its last, and processes it once', async () => {
    fakes.product(6, 'TAZ-01');
    fakes.product(7, 'BAR-03');
    /**
     * A delivery as the receive step stores it, whose event was then lost by the stream: no event
     * is on its way. WooCommerce's published order 727 under another id, its two goods given SKUs.
     */
    const stored = async (order: number, enqueuedSecondsAgo: number) => {
      const body = published('woocommerce/order-727.json', [
        ['"id": 727,', `"id": ${order},`],
        ['"sku": "",\n      "price": 3', '"sku": "TAZ-01",\n      "price": 3'],
        ['"sku": "Bar3"', '"sku": "BAR-03"'],
      ]);
      const d = { body, headers: wooHeaders(body, 'order.updated', SECRET) };
      const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toLowerCase(), v]));
      const sql = `insert into webhook_ingest.entregas
          (integracion_id, empresa_id, plataforma, recurso, tema, clave_dedup, referencia, headers, cuerpo, encolada_at)
        values ($1, $2, 'woocommerce', 'pedido', 'order.updated', $3, $4, $5, $6, now() - make_interval(secs => $7))
        returning id, encolada_at`;
      const params = [
        woo.id,
        EMPRESA.id,
        `pedido:${order}:lost`,
        `woo-${order}`,
        JSON.stringify(headers),
        Buffer.from(d.body),
        enqueuedSecondsAgo,
      ];
      return (await h.pool.query<{ id: number; encolada_at: Date }>(sql, params)).rows[0]!;
    };
    const events = async (id: number) =>
      (
        await h.pool.query<{ created_at: Date; published_at: Date | null }>(
          "select created_at, published_at from webhook_ingest.outbox where subject = 'intake.webhooks.delivery.received' and (payload->>'id_entrega')::int = $1",
          [id],
        )
      ).rows;
    const old = await stored(970, 3_600);
    const recent = await stored(971, 0);
    // A replica that looks every 200 ms for deliveries whose last event is over 3 s old.
    const sweeping = await startWebhookIngest(
      h,
      { WEBHOOK_REQUEUE_AFTER_MS: 3_000, WEBHOOK_REQUEUE_INTERVAL_MS: 200 },
      { deps: { catalog } },
    );
    try {
      expect(await settled(old.id)).toMatchObject({ estado: 'procesada', id_venta: fakes.sales.get('woo-970')!.id });
      expect(await settled(recent.id)).toMatchObject({ estado: 'procesada', id_venta: fakes.sales.get('woo-971')!.id });
      // One new event each, published; the recent one's not before 3 s after it was stored.
      const [oldEvents, recentEvents] = [await events(old.id), await events(recent.id)];
      expect([oldEvents.length, recentEvents.length]).toEqual([1, 1]);
      expect(oldEvents[0]!.published_at).not.toBeNull();
      expect(recentEvents[0]!.created_at.getTime() - recent.encolada_at.getTime()).toBeGreaterThanOrEqual(3_000);
      expect(fakes.creates.filter((c) => c.referencia_externa === 'woo-970' || c.referencia_externa === 'woo-971')).toHaveLength(2);
      const metrics = await (await fetch(`http://127.0.0.1:${sweeping.opsPort}/metrics`)).text();
      expect(metrics).toMatch(/^erp_webhook_deliveries_requeued_total\{service="webhook-ingest"\} 2$/m);
      // Settled, they are owed nothing more: later sweeps requeue neither.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect([(await events(old.id)).length, (await events(recent.id)).length]).toEqual([1, 1]);
    } finally {
      await sweeping.stop();
    }
  });

  it('updates a product from WooCommerce: absolute stock keyed by the delivery, then name, price and state', async () => {
    fakes.product(4, 'GOR-01', { nombre: 'Gorra', precio: '15.00' });
    const d = wooDelivery(
      wooProduct({ id: 3001, name: 'Gorra Azul', sku: 'GOR-01', regular_price: '15.00', sale_price: '12.50', stock_quantity: 8 }),
      'product.updated',
    );
    const r = await receive('woocommerce', woo.token, d.body, d.headers, 'producto');
    expect(await settled(r.id_entrega!)).toMatchObject({ estado: 'procesada' });
    expect(fakes.adjusts).toContainEqual(
      expect.objectContaining({
        clave: `webhook-entrega-${r.id_entrega}`,
        origen: 'webhook',
        lineas: [{ id_producto: 4, id_bodega: 2, stock: '8' }],
      }),
    );
    expect(fakes.catalogUpdates).toContainEqual({ id: 4, changes: { nombre: 'Gorra Azul', precio: '12.50' } });

    // An older version of the product changes nothing; a deletion disables it.
    const old = wooDelivery(
      wooProduct({
        id: 3001,
        name: 'Gorra',
        sku: 'GOR-01',
        regular_price: '15.00',
        stock_quantity: 3,
        date_modified_gmt: '2026-01-01T00:00:00',
      }),
      'product.updated',
    );
    const r2 = await receive('woocommerce', woo.token, old.body, old.headers, 'producto');
    expect(await settled(r2.id_entrega!)).toMatchObject({ estado: 'ignorada' });
    const del = wooDelivery({ id: 3001 }, 'product.deleted');
    const r3 = await receive('woocommerce', woo.token, del.body, del.headers, 'producto');
    expect(await settled(r3.id_entrega!)).toMatchObject({ estado: 'procesada' });
    expect(fakes.catalogUpdates).toContainEqual({ id: 4, changes: { enable: 0 } });
  });

  it('creates an unknown SKU with its mapping', async () => {
    const d = wooDelivery(
      wooProduct({ id: 3002, name: 'Bufanda', sku: 'BUF-01', regular_price: '9.99', stock_quantity: 4 }),
      'product.created',
    );
    const r = await receive('woocommerce', woo.token, d.body, d.headers, 'producto');
    expect(await settled(r.id_entrega!)).toMatchObject({ estado: 'procesada' });
    const id = fakes.products.get('BUF-01')!.id;
    expect((await h.pool.query("select producto_id from webhook_ingest.mapeos_producto where id_externo = '3002'")).rows).toEqual([
      { producto_id: id },
    ]);
    expect(fakes.adjusts).toContainEqual(expect.objectContaining({ lineas: [{ id_producto: id, id_bodega: 2, stock: '4' }] }));
  });

  it('rotates a token: the old one stops working at once, though it was just used (and cached)', async () => {
    const body = JSON.stringify({ id: 1 });
    await expect(receive('shopify', shop.token, body, shopifyHeaders(body, 'products/update'))).resolves.toMatchObject({
      estado: 'ignorada',
    });
    const rotated = await h.bus.request(webhookSubjects, 'webhooks.admin.integration.rotate-token', { id: shop.id }, { requestId: 't' });
    expect(rotated.path).toBe(`/api/webhook/shopify/${rotated.token}`);
    await expect(receive('shopify', shop.token, body, shopifyHeaders(body, 'products/update'))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    await expect(receive('shopify', rotated.token, body, shopifyHeaders(body, 'products/update'))).resolves.toMatchObject({
      estado: 'ignorada',
    });
  });
});
