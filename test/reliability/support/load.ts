import type { Bus } from '@erp/bus';
import { isAppError, returnsAdminSubjects, salesAdminSubjects } from '@erp/contracts';
import { mulberry32 } from '@erp/testing';
import {
  shopifyHeaders,
  shopifyOrderBody,
  wooHeaders,
  wooOrder,
  wooProduct,
} from '../../../services/webhook-ingest/test/platform.factories';
import { PRODUCT_REFS, SOLD_PRODUCTS, WOO_SECRET, type Company, type CompanyRef } from './fixture';
import { RETRYABLE, Tally, call, type Attempt, type CallInit } from './http';
import { sleep } from './wait';

const API = '/api/external/v1';

/** A line as the load sent it and as the invariants compare it: product and quantity. */
export interface LineRecord {
  id_producto: number;
  cantidad: number;
}

export interface SaleRecord {
  empresa: CompanyRef;
  referencia: string;
  /** Set once an attempt answered 2xx. */
  id?: number;
  acked: boolean;
  /** When its first attempt was sent and when it was acknowledged (epoch ms), for a failed check's evidence. */
  sentAt?: number;
  ackedAt?: number;
  estado: string;
  bodega: number;
  lines: LineRecord[];
  /** The body it was created with: a retry sends it again (another body under its reference is refused). */
  body: Record<string, unknown>;
  /** Line ids from the answer, by product (for updates). */
  lineIds?: Record<number, number>;
  /** Last update (or annulment) answered 2xx: what the sale must look like; `uncertain` when a later one got no answer. */
  expected?: { estado: string; lines: LineRecord[] };
  /** When that last update or annulment was acknowledged (epoch ms). */
  changedAt?: number;
  uncertain?: boolean;
  /**
   * Whether its lines are unknown: an update got no definite answer (it may have been applied).
   * An annulment answered afterwards makes its state certain again, not its lines.
   */
  linesUncertain?: boolean;
  busy?: boolean;
  /** A return was asked for it: it is no longer updated or annulled by the load. */
  returned?: boolean;
}

export interface ReturnRecord {
  empresa: CompanyRef;
  referencia: string;
  id_venta: number;
  acked: boolean;
  id?: number;
  sentAt?: number;
  ackedAt?: number;
  lines: LineRecord[];
}

export interface OrderRecord {
  empresa: CompanyRef;
  /** The sale's `referencia_externa`: `woo-<id>` or `shop-<id>`. */
  referencia: string;
  /** At least one delivery answered 200 (stored). */
  acked: boolean;
  sentAt?: number;
  /** When the first delivery answered 200 (epoch ms). */
  ackedAt?: number;
  lines: LineRecord[];
}

/** A WooCommerce product update (stock set by the platform) as the load delivered it. */
export interface ProductUpdateRecord {
  empresa: CompanyRef;
  /** The delivery's `referencia` in the inbox: `woo-producto-<platform id>`. */
  referencia: string;
  /** At least one delivery answered 200 (stored). */
  acked: boolean;
  sentAt?: number;
  ackedAt?: number;
}

export interface PackageRecord {
  empresa: CompanyRef;
  wr: string;
  acked: boolean;
  id?: number;
  sentAt?: number;
  ackedAt?: number;
}

/** What the load was told was done: the invariants check every acknowledged write is there. */
export interface LoadLedger {
  sales: Map<string, SaleRecord>;
  orders: Map<string, OrderRecord>;
  packages: Map<string, PackageRecord>;
  returns: Map<string, ReturnRecord>;
  productUpdates: ProductUpdateRecord[];
}

export interface LoadOptions {
  /** Gateway base URLs in rotation; requests are spread over them, retries go to the next one. */
  gateways: () => string[];
  companies: Record<CompanyRef, Company>;
  /** Concurrent clients. */
  workers: number;
  /** Pause of each client between operations. */
  thinkMs?: number;
  /** Unique per run: references, order ids and wr numbers start from it. */
  runId: string;
  /** Attempts of one operation answered with a retryable status (network error, 502, 503, 504). */
  attempts?: number;
  /** Whether PUT /sales/{id} exists in this build. */
  updates?: boolean;
  /** Back-office bus: annulments and returns go through it when given. */
  admin?: Bus;
  /** Relative weights of the operations. */
  mix?: Partial<Record<Operation, number>>;
  /** Seed of the operation mix, so a run's sequence can be replayed. */
  seed?: number;
}

export type Operation =
  | 'sale'
  | 'sale-repeat'
  | 'sale-strict'
  | 'update'
  | 'annul'
  | 'return'
  | 'return-race'
  | 'woo-order'
  | 'woo-product'
  | 'shop-order'
  | 'packages'
  | 'read';

const DEFAULT_MIX: Record<Operation, number> = {
  sale: 30,
  'sale-repeat': 4,
  'sale-strict': 6,
  update: 10,
  annul: 3,
  return: 3,
  'return-race': 3,
  'woo-order': 12,
  'woo-product': 3,
  'shop-order': 8,
  packages: 8,
  read: 19,
};

/**
 * A steady mixed load as partners and platforms produce it: sales (new, repeated references,
 * on a company that forbids overselling), updates, annulments, returns (some racing an
 * annulment or an update of the same sale), WooCommerce and Shopify orders
 * delivered several times, package imports and reads. Like a careful client it retries what
 * may not have been processed (same reference, same delivery) and records every write that was
 * acknowledged, for the invariant checks afterwards.
 */
export class Load {
  readonly tally = new Tally();
  readonly ledger: LoadLedger = { sales: new Map(), orders: new Map(), packages: new Map(), returns: new Map(), productUpdates: [] };
  /** Last version sent per platform product: each update is newer than the one before. */
  private readonly productVersions = new Map<string, number>();
  private running = false;
  private workers: Promise<void>[] = [];
  private counter = 0;
  private rotation = 0;
  private readonly random: () => number;
  private readonly mix: Array<[Operation, number]>;

  constructor(private readonly options: LoadOptions) {
    this.random = mulberry32(options.seed ?? 0x5eed);
    const mix = { ...DEFAULT_MIX, ...options.mix };
    if (!options.updates) mix.update = 0;
    if (!options.admin) mix.annul = mix.return = mix['return-race'] = 0;
    this.mix = Object.entries(mix).filter(([, w]) => w > 0) as Array<[Operation, number]>;
  }

  start(): void {
    this.running = true;
    this.workers = Array.from({ length: this.options.workers }, () => this.worker());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  /** Runs `n` operations of one kind right now (tests use it for a known workload). */
  async run(op: Operation, n = 1): Promise<void> {
    for (let i = 0; i < n; i++) await this.perform(op);
  }

  private async worker(): Promise<void> {
    while (this.running) {
      await this.perform(this.pickOperation());
      if (this.options.thinkMs) await sleep(this.options.thinkMs * (0.5 + this.random()));
    }
  }

  private pickOperation(): Operation {
    const total = this.mix.reduce((s, [, w]) => s + w, 0);
    let r = this.random() * total;
    for (const [op, w] of this.mix) {
      r -= w;
      if (r <= 0) return op;
    }
    return this.mix[0]![0];
  }

  private async perform(op: Operation): Promise<void> {
    switch (op) {
      case 'sale':
        return this.createSale(this.pick(['a', 'b'] as const));
      case 'sale-repeat':
        return this.repeatSale();
      case 'sale-strict':
        return this.createSale('s');
      case 'update':
        return this.updateSale();
      case 'annul':
        return this.annulSale();
      case 'return':
        return this.returnSale();
      case 'return-race':
        return this.raceReturn();
      case 'woo-order':
        return this.wooOrder(this.pick(['a', 'b'] as const));
      case 'woo-product':
        return this.wooProductUpdate(this.pick(['a', 'b'] as const));
      case 'shop-order':
        return this.shopOrder(this.pick(['a', 'b'] as const));
      case 'packages':
        return this.importPackages(this.pick(['a', 'b'] as const));
      case 'read':
        return this.read();
    }
  }

  /**
   * Sends with retries: a retryable answer (or no answer) is tried again, on the next gateway,
   * after Retry-After (capped) or a growing pause. Resolves with the last attempt.
   */
  private async send(op: string, path: string, init: CallInit): Promise<Attempt & { unsure: boolean }> {
    const attempts = this.options.attempts ?? 8;
    let last: Attempt | undefined;
    // A timeout or a lost connection may hide a request that was applied: a later refusal may be its consequence.
    let unsure = false;
    for (let i = 0; i < attempts; i++) {
      const gateways = this.options.gateways();
      const base = gateways[this.rotation++ % gateways.length]!;
      last = await call(`${base}${path}`, init);
      this.tally.record(op, last);
      if (!RETRYABLE.has(last.status)) return { ...last, unsure };
      if (last.status === 0 || last.status === 504) unsure = true;
      const retryAfter = last.status === 0 ? NaN : Number(last.headers.get('retry-after'));
      await sleep(Number.isFinite(retryAfter) ? Math.min(retryAfter * 1000, 2_000) : Math.min(200 * 2 ** i, 2_000));
    }
    return { ...last!, unsure };
  }

  private async createSale(empresa: CompanyRef): Promise<void> {
    const c = this.options.companies[empresa];
    const n = ++this.counter;
    const referencia = `${this.options.runId}-V${n}`;
    const estado = empresa === 's' ? 'Completada' : this.pick(['Completada', 'Completada', 'Pagada', 'Pendiente', 'Cotizacion']);
    const bodega = this.random() < 0.8 ? c.bodegas.principal! : c.bodegas.reserva!;
    const products = this.sample(PRODUCT_REFS, 1 + Math.floor(this.random() * 3));
    const lines = products.map((p) => ({ id_producto: c.productos[p]!, cantidad: 1 + Math.floor(this.random() * 3) }));
    const body = {
      referencia_externa: referencia,
      fecha: '2026-03-10',
      estado,
      id_sucursal: c.sucursales.centro,
      id_bodega: bodega,
      id_documento: estado === 'Cotizacion' ? c.documentos.cotizacion : this.pick([c.documentos.factura, c.documentos.ticket]),
      ...(estado === 'Cotizacion' ? {} : { id_canal: c.canales.tienda }),
      ...(estado === 'Pendiente' ? { id_cliente: c.clientes.juan } : {}),
      detalles: [...lines, ...(this.random() < 0.1 ? [{ id_producto: c.productos.instalacion!, cantidad: 1 }] : [])],
    };
    const record: SaleRecord = {
      empresa,
      referencia,
      acked: false,
      estado: estado === 'Pagada' ? 'Completada' : estado,
      bodega,
      lines,
      body,
      sentAt: Date.now(),
    };
    this.ledger.sales.set(`${empresa}:${referencia}`, record);
    const op = empresa === 's' ? 'POST /sales (no oversell)' : 'POST /sales';
    const res = await this.send(op, `${API}/sales`, { method: 'POST', key: c.key, json: body });
    if (res.status === 201 || res.status === 200) this.acknowledgeSale(record, res);
    else if (!(empresa === 's' && res.status === 422)) this.tally.fail(op);
  }

  private acknowledgeSale(record: SaleRecord, res: Attempt): void {
    if (res.status === 0) return;
    const data = res.body?.data;
    record.acked = true;
    record.ackedAt = Date.now();
    record.id = data?.id;
    record.lineIds = Object.fromEntries(
      ((data?.detalles ?? []) as Array<{ id: number; id_producto: number }>).map((l) => [l.id_producto, l.id]),
    );
  }

  /** A partner retrying a sale it already got an answer for: 200, `idempotent`, the same sale. */
  private async repeatSale(): Promise<void> {
    const acked = [...this.ledger.sales.values()].filter((s) => s.acked && s.empresa !== 's');
    if (acked.length === 0) return this.createSale('a');
    const record = this.pick(acked);
    const c = this.options.companies[record.empresa];
    const res = await this.send('POST /sales (repeat)', `${API}/sales`, { method: 'POST', key: c.key, json: record.body });
    if (res.status !== 200 || res.body?.meta?.idempotent !== true || res.body?.data?.id !== record.id)
      this.tally.fail('POST /sales (repeat)');
  }

  /** Changes the quantities of a Pendiente sale or a quotation, or turns a quotation into a sale. */
  private async updateSale(): Promise<void> {
    const editable = [...this.ledger.sales.values()].filter(
      (s) => s.acked && !s.busy && !s.returned && s.empresa !== 's' && ['Pendiente', 'Cotizacion'].includes(s.expected?.estado ?? s.estado),
    );
    if (editable.length === 0) return this.createSale(this.pick(['a', 'b'] as const));
    await this.updateRecord(this.pick(editable), 'PUT /sales/{id}');
  }

  /** PUT of new quantities (or a quotation's conversion); `refusable` when a 422 is an expected outcome (a race). */
  private async updateRecord(record: SaleRecord, op: string, refusable = false): Promise<void> {
    const c = this.options.companies[record.empresa];
    const current = record.expected ?? { estado: record.estado, lines: record.lines };
    const convert = current.estado === 'Cotizacion' && this.random() < 0.4;
    const lines = current.lines.map((l) => ({ id_producto: l.id_producto, cantidad: 1 + Math.floor(this.random() * 4) }));
    const body = {
      ...(convert ? { estado: 'Completada', id_documento: c.documentos.factura, id_canal: c.canales.tienda } : {}),
      detalles: lines.map((l) => ({
        ...(record.lineIds?.[l.id_producto] ? { id: record.lineIds[l.id_producto] } : { id_producto: l.id_producto }),
        cantidad: l.cantidad,
      })),
    };
    record.busy = true;
    try {
      const res = await this.send(op, `${API}/sales/${record.id}`, { method: 'PUT', key: c.key, json: body });
      if (res.status === 200) {
        record.expected = { estado: convert ? 'Completada' : current.estado, lines };
        record.changedAt = Date.now();
        record.uncertain = false;
        record.linesUncertain = false;
        record.lineIds = Object.fromEntries(
          ((res.body?.data?.detalles ?? []) as Array<{ id: number; id_producto: number }>).map((l) => [l.id_producto, l.id]),
        );
      } else if (res.status === 0 || res.status >= 500 || res.unsure) {
        // No definite answer: the change may or may not have been applied (a retry refused after a
        // timeout may be refused because of it); stock must be right either way.
        record.uncertain = true;
        record.linesUncertain = true;
        this.tally.fail(res.status < 500 && res.status !== 0 ? `${op} (refused after a timeout)` : op);
      } else if (!(refusable && res.status === 422)) {
        this.tally.fail(op);
      }
    } finally {
      record.busy = false;
    }
  }

  /** Annuls a sale through the back office, as an operator would. */
  private async annulSale(): Promise<void> {
    const candidates = [...this.ledger.sales.values()].filter(
      (s) => s.acked && !s.busy && !s.returned && s.empresa !== 's' && (s.expected?.estado ?? s.estado) !== 'Anulada',
    );
    if (candidates.length === 0) return;
    await this.annulRecord(this.pick(candidates), 'annul (back office)');
  }

  private async annulRecord(record: SaleRecord, op: string, refusable = false): Promise<void> {
    const admin = this.options.admin!;
    record.busy = true;
    try {
      const done = await this.backOffice(
        op,
        () =>
          admin.request(
            salesAdminSubjects,
            'sales.admin.annul',
            { empresa_id: this.options.companies[record.empresa].id, id_venta: record.id! },
            { requestId: `annul-${record.id}` },
          ),
        refusable,
      );
      if (done === 'done') {
        record.expected = { estado: 'Anulada', lines: (record.expected ?? record).lines };
        record.changedAt = Date.now();
        record.uncertain = false;
      } else if (done === 'unknown') {
        record.uncertain = true;
      }
    } finally {
      record.busy = false;
    }
  }

  /** A return of one unit of a completed sale through the back office, idempotent by its reference. */
  private async returnSale(): Promise<void> {
    const admin = this.options.admin!;
    const candidates = [...this.ledger.sales.values()].filter(
      (s) =>
        s.acked &&
        !s.busy &&
        !s.returned &&
        !s.uncertain &&
        s.empresa !== 's' &&
        (s.expected?.estado ?? s.estado) === 'Completada' &&
        (s.expected ?? s).lines.length > 0,
    );
    if (candidates.length === 0) return;
    const sale = this.pick(candidates);
    sale.returned = true;
    const line = (sale.expected ?? sale).lines[0]!;
    const c = this.options.companies[sale.empresa];
    const record: ReturnRecord = {
      empresa: sale.empresa,
      referencia: `${this.options.runId}-D${++this.counter}`,
      id_venta: sale.id!,
      acked: false,
      sentAt: Date.now(),
      lines: [{ id_producto: line.id_producto, cantidad: 1 }],
    };
    this.ledger.returns.set(`${sale.empresa}:${record.referencia}`, record);
    await this.backOffice('return (back office)', async () => {
      const reply = await admin.request(
        returnsAdminSubjects,
        'returns.admin.create',
        {
          empresa_id: c.id,
          id_venta: sale.id!,
          fecha: '2026-03-11',
          tipo: 'devolucion',
          referencia: record.referencia,
          detalles: [{ id_producto: line.id_producto, cantidad: 1 }],
        },
        { requestId: `return-${record.referencia}` },
      );
      record.acked = true;
      record.ackedAt = Date.now();
      record.id = reply.devolucion.id;
    });
  }

  /**
   * A return of all of a sale's first line at the same moment as its annulment (a completed sale)
   * or a PUT of its quantities (a pending one): they serialise on the sale, so one of them may be
   * refused (an expected outcome here), and the stock comes back once whichever wins.
   */
  private async raceReturn(): Promise<void> {
    const admin = this.options.admin!;
    const candidates = [...this.ledger.sales.values()].filter(
      (s) =>
        s.acked &&
        !s.busy &&
        !s.returned &&
        !s.uncertain &&
        s.empresa !== 's' &&
        ['Completada', 'Pendiente'].includes((s.expected ?? s).estado) &&
        (s.expected ?? s).lines.length > 0,
    );
    if (candidates.length === 0) return;
    const sale = this.pick(candidates);
    sale.returned = true;
    const current = sale.expected ?? { estado: sale.estado, lines: sale.lines };
    const line = current.lines[0]!;
    const c = this.options.companies[sale.empresa];
    const record: ReturnRecord = {
      empresa: sale.empresa,
      referencia: `${this.options.runId}-D${++this.counter}`,
      id_venta: sale.id!,
      acked: false,
      sentAt: Date.now(),
      lines: [{ ...line }],
    };
    this.ledger.returns.set(`${sale.empresa}:${record.referencia}`, record);
    const devolver = this.backOffice(
      'return racing a change (back office)',
      async () => {
        const reply = await admin.request(
          returnsAdminSubjects,
          'returns.admin.create',
          {
            empresa_id: c.id,
            id_venta: sale.id!,
            fecha: '2026-03-11',
            tipo: 'devolucion',
            referencia: record.referencia,
            detalles: [{ id_producto: line.id_producto, cantidad: line.cantidad }],
          },
          { requestId: `return-${record.referencia}` },
        );
        record.acked = true;
        record.ackedAt = Date.now();
        record.id = reply.devolucion.id;
      },
      true,
    );
    const change =
      current.estado === 'Completada'
        ? this.annulRecord(sale, 'annul racing a return (back office)', true)
        : this.updateRecord(sale, 'PUT /sales/{id} racing a return', true);
    await Promise.all([devolver, change]);
  }

  /**
   * A back-office request over NATS, retried while the service is unavailable or slow;
   * `refusable` when a refusal (a business rule) is an expected outcome.
   */
  private async backOffice(op: string, request: () => Promise<unknown>, refusable = false): Promise<'done' | 'refused' | 'unknown'> {
    for (let i = 0; i < (this.options.attempts ?? 8); i++) {
      const started = performance.now();
      try {
        await request();
        this.tally.record(op, { status: 200, body: undefined, text: '', headers: new Headers(), ms: performance.now() - started });
        return 'done';
      } catch (err) {
        const code = isAppError(err) ? err.code : 'ERROR';
        this.tally.record(op, {
          status: 0,
          error: code,
          body: undefined,
          text: '',
          headers: new Headers(),
          ms: performance.now() - started,
        });
        if (code !== 'UNAVAILABLE' && code !== 'TIMEOUT') {
          if (!(refusable && code === 'BUSINESS_RULE')) this.tally.fail(op);
          return 'refused';
        }
        await sleep(Math.min(200 * 2 ** i, 2_000));
      }
    }
    this.tally.fail(op);
    return 'unknown';
  }

  private orderLines(empresa: CompanyRef): Array<LineRecord & { codigo: string }> {
    const c = this.options.companies[empresa];
    return this.sample(PRODUCT_REFS, 1 + Math.floor(this.random() * 2)).map((p) => ({
      id_producto: c.productos[p]!,
      codigo: SOLD_PRODUCTS[p].codigo,
      cantidad: 1 + Math.floor(this.random() * 3),
    }));
  }

  /** A WooCommerce order delivered one to three times (platforms retry), sometimes two at once. */
  private async wooOrder(empresa: CompanyRef): Promise<void> {
    const c = this.options.companies[empresa];
    const id = this.orderId();
    const lines = this.orderLines(empresa);
    const order = wooOrder({
      id,
      status: 'processing',
      line_items: lines.map((l) => ({
        product_id: 9_000_000 + l.id_producto,
        sku: l.codigo,
        quantity: l.cantidad,
        total: (10 * l.cantidad).toFixed(2),
      })),
    });
    const body = JSON.stringify(order);
    const record: OrderRecord = { empresa, referencia: `woo-${id}`, acked: false, sentAt: Date.now(), lines };
    this.ledger.orders.set(`${empresa}:${record.referencia}`, record);
    await this.deliverTimes(
      record,
      c.integraciones.woo!.path,
      body,
      () => wooHeaders(body, 'order.created', WOO_SECRET),
      'POST /api/webhook/woocommerce',
    );
  }

  /**
   * A WooCommerce product update setting the stock of one of the products the orders sell (same
   * platform id, name and price), newer than the last one sent for it, delivered one to three
   * times: the copies are one delivery, and the stock moves once, through the ledger.
   */
  private async wooProductUpdate(empresa: CompanyRef): Promise<void> {
    const c = this.options.companies[empresa];
    const [ref] = this.sample(PRODUCT_REFS, 1);
    const product = SOLD_PRODUCTS[ref!];
    const platformId = 9_000_000 + c.productos[ref!]!;
    const version = (this.productVersions.get(`${empresa}:${platformId}`) ?? 0) + 1;
    this.productVersions.set(`${empresa}:${platformId}`, version);
    const body = JSON.stringify(
      wooProduct({
        id: platformId,
        name: product.nombre,
        sku: product.codigo,
        regular_price: product.precio.toFixed(2),
        manage_stock: true,
        stock_quantity: 2_000 + Math.floor(this.random() * 3_000),
        date_modified_gmt: new Date(Date.UTC(2026, 0, 1) + version * 1_000).toISOString().slice(0, 19),
      }),
    );
    const record: ProductUpdateRecord = { empresa, referencia: `woo-producto-${platformId}`, acked: false, sentAt: Date.now() };
    this.ledger.productUpdates.push(record);
    await this.deliverTimes(
      record,
      `${c.integraciones.woo!.path}/producto`,
      body,
      () => wooHeaders(body, 'product.updated', WOO_SECRET),
      'POST /api/webhook/woocommerce/producto',
    );
  }

  private async shopOrder(empresa: CompanyRef): Promise<void> {
    const c = this.options.companies[empresa];
    const id = String(820_982_911_946_154_508n + BigInt(this.orderId()));
    const lines = this.orderLines(empresa);
    const body = shopifyOrderBody({
      id,
      financial_status: 'paid',
      line_items: lines.map((l, i) => ({
        id: `${id}${i}`,
        product_id: String(7_000_000_000 + l.id_producto),
        variant_id: String(8_000_000_000 + l.id_producto),
        sku: l.codigo,
        title: l.codigo,
        quantity: l.cantidad,
        price: '10.00',
      })),
    });
    const record: OrderRecord = { empresa, referencia: `shop-${id}`, acked: false, sentAt: Date.now(), lines };
    this.ledger.orders.set(`${empresa}:${record.referencia}`, record);
    const eventId = `evt-${this.options.runId}-${id}`;
    await this.deliverTimes(
      record,
      c.integraciones.shop!.path,
      body,
      () => shopifyHeaders(body, 'orders/create', undefined, eventId),
      'POST /api/webhook/shopify',
    );
  }

  private async deliverTimes(
    record: { acked: boolean; ackedAt?: number },
    path: string,
    body: string,
    headers: () => Record<string, string>,
    op: string,
  ): Promise<void> {
    const times = 1 + Math.floor(this.random() * 3);
    const deliver = async () => {
      const res = await this.send(op, path, { method: 'POST', body, headers: headers() });
      if (res.status === 200) {
        record.acked = true;
        record.ackedAt ??= Date.now();
      }
      return res.status;
    };
    const statuses = this.random() < 0.3 ? await Promise.all(Array.from({ length: times }, deliver)) : await sequential(times, deliver);
    if (!statuses.includes(200)) this.tally.fail(op);
  }

  private async importPackages(empresa: CompanyRef): Promise<void> {
    const c = this.options.companies[empresa];
    const count = 1 + Math.floor(this.random() * 8);
    const earlier = [...this.ledger.packages.values()].filter((p) => p.empresa === empresa && p.acked);
    const wrs = Array.from({ length: count }, () => `${this.options.runId}-WR${++this.counter}`);
    // Sometimes a wr already imported: it must be skipped, with the existing package's id.
    if (earlier.length > 0 && this.random() < 0.3) wrs.push(this.pick(earlier).wr);
    const packages = wrs.map((wr, i) => ({
      cliente: 'Cliente Uno',
      codigo_asesor: 'AS-01',
      wr,
      guia: `G-${wr}`,
      embalaje: 'Caja',
      piezas: 1 + i,
      peso: 2.5,
      precio: 10,
      cuenta_a_terceros: 0,
      otros: 0,
      total: 10,
      ...(i % 2 === 0 ? { sucursal: 'Sucursal Centro' } : { id_sucursal: c.sucursales.norte }),
    }));
    for (const wr of wrs)
      if (!this.ledger.packages.has(`${empresa}:${wr}`))
        this.ledger.packages.set(`${empresa}:${wr}`, { empresa, wr, acked: false, sentAt: Date.now() });
    const res = await this.send('POST /packages/import', `${API}/packages/import`, { method: 'POST', key: c.key, json: { packages } });
    if (res.status !== 200) return this.tally.fail('POST /packages/import');
    for (const item of (res.body?.items ?? []) as Array<{ wr: string; id: number }>) {
      const record = this.ledger.packages.get(`${empresa}:${item.wr}`)!;
      record.acked = true;
      record.ackedAt ??= Date.now();
      record.id ??= item.id;
    }
    if ((res.body?.errors ?? []).length > 0) this.tally.fail('POST /packages/import');
  }

  private async read(): Promise<void> {
    const empresa = this.pick(['a', 'b', 's'] as const);
    const c = this.options.companies[empresa];
    const acked = [...this.ledger.sales.values()].filter((s) => s.acked && s.empresa === empresa);
    const paths = [
      `${API}/inventory?per_page=20`,
      `${API}/inventory/summary`,
      `${API}/inventory/${c.productos.laptop}`,
      `${API}/sales?per_page=10&order_by=created_at&order_direction=desc`,
      `${API}/sales/summary?fecha_inicio=2026-01-01&fecha_fin=2026-12-31`,
      acked.length > 0 ? `${API}/sales/${this.pick(acked).id}` : `${API}/system/rate-limit`,
    ];
    const path = this.pick(paths);
    const op = `GET ${path.replace(/\?.*$/, '').replace(/\/\d+$/, '/{id}')}`;
    const res = await this.send(op, path, { key: c.key });
    if (res.status !== 200) this.tally.fail(op);
  }

  private orderId(): number {
    // Distinct across runs sharing a database: the run id's hash spreads the ranges.
    return hash(this.options.runId) * 1_000 + ++this.counter;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private sample<T>(items: readonly T[], n: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(this.random() * pool.length), 1)[0]!);
    return out;
  }
}

async function sequential<T>(n: number, f: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

function hash(text: string): number {
  let h = 0;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) % 1_000_000;
  return h;
}
