import { randomBytes } from 'node:crypto';
import type { Server } from 'node:https';
import { wooHeaders, wooOrder, wooPing, wooProduct } from '../../../services/webhook-ingest/test/platform.factories';
import type { DeliveryAttempt, Outgoing, WebhookFaults } from './deliveries';
import { SimulatedShop } from './simulated-shop';
import { closeServer, listenHttps, type SimRequest, type SimResponse } from './https';
import { fromCents, sumCents, toCents } from './money';
import { route, wooDate } from './common';

/*
 * A WooCommerce shop speaking REST API v3 (`/wp-json/wc/v3`) over HTTPS.
 *
 * Sources of the shapes and rules:
 * - WooCommerce REST API docs, https://woocommerce.github.io/woocommerce-rest-api-docs/ (repository
 *   woocommerce/woocommerce-rest-api-docs, source/includes/wp-api-v3/): orders (list parameters
 *   `modified_after`, `dates_are_gmt`, `orderby`, `order`, `page`, `per_page` ≤ 100, `status`),
 *   order refunds (`_order-refunds.md`: positive `amount`, lines with negative quantities and
 *   `_refunded_item_id`), products and variations (`sku` lookup, `/batch` with create/update/delete),
 *   webhooks (`_webhooks.md`: status active/paused/disabled, topic, resource, event, delivery_url,
 *   secret), pagination headers `X-WP-Total`/`X-WP-TotalPages` and HTTP Basic auth over HTTPS.
 * - The order and product bodies are the published example shapes, built by the webhook-ingest
 *   factories (services/webhook-ingest/test/platform.factories.ts, whose README under
 *   test/fixtures/platforms names each published example).
 * - Webhook delivery and failure counting: woocommerce/woocommerce
 *   plugins/woocommerce/includes/class-wc-webhook.php (`deliver`, `log_delivery`,
 *   `failed_delivery`): headers X-WC-Webhook-Source/Topic/Resource/Event/Signature/ID/Delivery-ID,
 *   signature base64(HMAC-SHA256(secret, body)); success is a status in [200, 303); never retried;
 *   each failure increments `failure_count`, and a failure when the count is already above
 *   `woocommerce_max_webhook_delivery_failures` (5) sets the webhook `disabled`.
 * - The batch limit: WordPress's REST batch limit filter `woocommerce_rest_batch_items_limit`, 100,
 *   answered 413 `woocommerce_rest_request_entity_too_large`.
 */

const BASE = '/wp-json/wc/v3';

export interface WooOptions {
  consumerKey?: string;
  consumerSecret?: string;
  /** `woocommerce_max_webhook_delivery_failures`. */
  maxDeliveryFailures?: number;
  faults?: WebhookFaults;
}

export interface WooLineSpec {
  sku: string;
  quantity: number;
  /** Unit price before tax, a decimal string; defaults to the product's price. */
  price?: string;
  /** The line's tax, a decimal string. */
  tax?: string;
  name?: string;
}

export interface WooOrderSpec {
  status?: 'pending' | 'processing' | 'on-hold' | 'completed' | 'cancelled' | 'refunded' | 'failed';
  lines: WooLineSpec[];
  shipping?: string;
  email?: string;
}

export interface WooRefundSpec {
  /** Lines refunded (by SKU or order line id) with their quantities; the amount defaults to their totals. */
  lines?: Array<{ sku?: string; lineId?: number; quantity: number }>;
  amount?: string;
  reason?: string;
  /** Puts the refunded units back in stock (`api_restock`, default true). */
  restock?: boolean;
}

interface Line {
  id: number;
  product_id: number;
  variation_id: number;
  sku: string;
  name: string;
  quantity: number;
  total: string;
  total_tax: string;
  /** Units this line took from stock (WooCommerce's `_reduced_stock` item meta). */
  reduced: number;
}

interface Refund {
  id: number;
  created: Date;
  amount: string;
  reason: string;
  lines: Array<{ id: number; line: Line; quantity: number; total: string; total_tax: string }>;
}

interface Order {
  id: number;
  status: string;
  created: Date;
  modified: Date;
  email: string;
  orderKey: string;
  lines: Line[];
  shipping: { id: number; total: string } | null;
  refunds: Refund[];
}

interface Product {
  id: number;
  parentId: number;
  name: string;
  sku: string;
  price: string;
  stock: number | null;
  modified: Date;
  variations: number[];
}

export interface WooWebhook {
  id: number;
  name: string;
  status: 'active' | 'paused' | 'disabled';
  topic: string;
  delivery_url: string;
  secret: string;
  failureCount: number;
  created: Date;
  modified: Date;
}

const wpError = (status: number, code: string, message: string, extra: Record<string, unknown> = {}): SimResponse => ({
  status,
  body: { code, message, data: { status, ...extra } },
});

const VALID_TOPIC = /^(coupon|customer|order|product)\.(created|updated|deleted|restored)$|^action\.[a-z0-9_]+$/;
const STATUSES: Array<WooWebhook['status']> = ['active', 'paused', 'disabled'];

const json = (req: SimRequest): Record<string, unknown> => {
  if (req.body.length === 0) return {};
  const parsed: unknown = JSON.parse(req.body.toString('utf8'));
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
};

export class WooShop extends SimulatedShop {
  readonly consumerKey: string;
  readonly consumerSecret: string;
  readonly webhooks = new Map<number, WooWebhook>();
  private readonly orders = new Map<number, Order>();
  private readonly products = new Map<number, Product>();
  private readonly maxFailures: number;
  private postSeq = 700;
  private itemSeq = 300;
  private webhookSeq = 10;
  private readonly stockReduced = new Set<number>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    options: WooOptions,
  ) {
    super('woocommerce', options.faults);
    this.consumerKey = options.consumerKey ?? `ck_${randomBytes(20).toString('hex')}`;
    this.consumerSecret = options.consumerSecret ?? `cs_${randomBytes(20).toString('hex')}`;
    this.maxFailures = options.maxDeliveryFailures ?? 5;
  }

  static async start(options: WooOptions = {}): Promise<WooShop> {
    let shop: WooShop | undefined;
    const { server, url } = await listenHttps((req) => shop!.handle(req));
    shop = new WooShop(server, url, options);
    return shop;
  }

  async close(): Promise<void> {
    await this.sender.close();
    await closeServer(this.server);
  }

  // ---- test controls ----------------------------------------------------------------------------

  /** A product (or, with `parentId`, a variation) with a SKU and managed stock. */
  addProduct(input: { sku: string; name?: string; price?: string; stock?: number | null; parentId?: number }): number {
    const id = ++this.postSeq;
    const parentId = input.parentId ?? 0;
    this.products.set(id, {
      id,
      parentId,
      name: input.name ?? `Producto ${input.sku}`,
      sku: input.sku,
      price: input.price ?? '10.00',
      stock: input.stock === undefined ? 0 : input.stock,
      modified: this.now(),
      variations: [],
    });
    if (parentId) this.products.get(parentId)?.variations.push(id);
    return id;
  }

  /** The shop's stock of a SKU (product or variation). */
  stockOf(sku: string): number | null {
    return this.bySku(sku)?.stock ?? null;
  }

  setStock(sku: string, stock: number): void {
    const p = this.bySku(sku);
    if (!p) throw new Error(`No product with SKU ${sku}`);
    p.stock = stock;
    p.modified = this.now();
  }

  createOrder(spec: WooOrderSpec): Record<string, unknown> {
    const now = this.now();
    const lines = spec.lines.map((l): Line => {
      const p = this.bySku(l.sku) ?? this.products.get(this.addProduct({ sku: l.sku, price: l.price, stock: null }))!;
      const unit = l.price ?? p.price;
      return {
        id: ++this.itemSeq,
        product_id: p.parentId || p.id,
        variation_id: p.parentId ? p.id : 0,
        sku: l.sku,
        name: l.name ?? p.name,
        quantity: l.quantity,
        total: fromCents(toCents(unit) * l.quantity),
        total_tax: l.tax ?? '0.00',
        reduced: 0,
      };
    });
    const order: Order = {
      id: ++this.postSeq,
      status: spec.status ?? 'processing',
      created: now,
      modified: now,
      email: spec.email ?? 'ana.lopez@example.com',
      orderKey: `wc_order_${randomBytes(6).toString('hex')}`,
      lines,
      shipping: spec.shipping ? { id: ++this.itemSeq, total: spec.shipping } : null,
      refunds: [],
    };
    this.orders.set(order.id, order);
    this.syncStock(order);
    this.emit('order.created', order);
    return this.render(order);
  }

  updateOrder(id: number, change: { status?: WooOrderSpec['status'] }): Record<string, unknown> {
    const order = this.order(id);
    if (change.status) order.status = change.status;
    this.syncStock(order);
    order.modified = this.now();
    this.emit('order.updated', order);
    return this.render(order);
  }

  cancelOrder(id: number): Record<string, unknown> {
    return this.updateOrder(id, { status: 'cancelled' });
  }

  /** A refund: the order's `refunds` gains it, and it is `refunded` once refunds reach its total. */
  refundOrder(id: number, spec: WooRefundSpec = {}): Record<string, unknown> {
    const order = this.order(id);
    const lines = (spec.lines ?? []).map((r) => {
      const line = order.lines.find((l) => (r.lineId ? l.id === r.lineId : l.sku === r.sku));
      if (!line) throw new Error(`Order ${id} has no line ${r.lineId ?? r.sku}`);
      const unit = toCents(line.total) / line.quantity;
      const unitTax = toCents(line.total_tax) / line.quantity;
      return {
        id: ++this.itemSeq,
        line,
        quantity: r.quantity,
        total: fromCents(-Math.round(unit * r.quantity)),
        total_tax: fromCents(-Math.round(unitTax * r.quantity)),
      };
    });
    const amount = spec.amount ?? fromCents(-lines.reduce((s, l) => s + toCents(l.total) + toCents(l.total_tax), 0));
    const refund: Refund = { id: ++this.postSeq, created: this.now(), amount, reason: spec.reason ?? '', lines };
    order.refunds.push(refund);
    // `wc_restock_refunded_items`: back to stock, and the line's `_reduced_stock` lowered to match.
    if (spec.restock ?? true) {
      for (const l of lines) {
        const back = Math.min(l.quantity, l.line.reduced);
        l.line.reduced -= back;
        this.moveStock(l.line, back);
      }
    }
    if (sumCents(order.refunds.map((r) => r.amount)) >= toCents(this.total(order))) order.status = 'refunded';
    order.modified = refund.created;
    // WooCommerce has no refund topic: the order changes, and `order.updated` carries it.
    this.emit('order.updated', order);
    return this.renderRefund(order, refund);
  }

  /** The order as `GET /orders/{id}` answers it. */
  orderJson(id: number): Record<string, unknown> {
    return this.render(this.order(id));
  }

  /** A webhook made directly in the shop (as its admin would), active unless said. */
  addWebhook(input: { topic: string; delivery_url: string; secret?: string; status?: WooWebhook['status']; name?: string }): WooWebhook {
    const now = this.now();
    const hook: WooWebhook = {
      id: ++this.webhookSeq,
      name: input.name ?? `Webhook ${input.topic}`,
      status: input.status ?? 'active',
      topic: input.topic,
      delivery_url: input.delivery_url,
      secret: input.secret ?? randomBytes(24).toString('base64url'),
      failureCount: 0,
      created: now,
      modified: now,
    };
    this.webhooks.set(hook.id, hook);
    return hook;
  }

  // ---- the REST API ---------------------------------------------------------------------------

  private async handle(req: SimRequest): Promise<SimResponse> {
    this.metrics.requests++;
    if (!req.path.startsWith(BASE)) return wpError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
    const refused = this.authenticate(req);
    if (refused) {
      this.metrics.unauthorized++;
      return refused;
    }
    const failure = this.injectedFailure();
    if (failure) return failure;
    const p = req.path.slice(BASE.length);
    const answer = route(
      [
        ['GET', /^\/orders\/?$/, 'GET /orders', (r) => this.listOrders(r)],
        ['GET', /^\/orders\/(\d+)$/, 'GET /orders/{id}', (_r, [id]) => this.getOrder(Number(id))],
        ['GET', /^\/orders\/(\d+)\/refunds$/, 'GET /orders/{id}/refunds', (_r, [id]) => this.listRefunds(Number(id))],
        ['GET', /^\/webhooks\/?$/, 'GET /webhooks', (r) => this.listWebhooks(r)],
        ['POST', /^\/webhooks\/?$/, 'POST /webhooks', (r) => this.createWebhook(r)],
        ['GET', /^\/webhooks\/(\d+)$/, 'GET /webhooks/{id}', (_r, [id]) => this.getWebhook(Number(id))],
        ['PUT', /^\/webhooks\/(\d+)$/, 'PUT /webhooks/{id}', (r, [id]) => this.updateWebhook(Number(id), r)],
        ['POST', /^\/webhooks\/(\d+)$/, 'PUT /webhooks/{id}', (r, [id]) => this.updateWebhook(Number(id), r)],
        ['DELETE', /^\/webhooks\/(\d+)$/, 'DELETE /webhooks/{id}', (r, [id]) => this.deleteWebhook(Number(id), r)],
        ['GET', /^\/products\/?$/, 'GET /products', (r) => this.listProducts(r, 0)],
        ['GET', /^\/products\/(\d+)$/, 'GET /products/{id}', (_r, [id]) => this.getProduct(Number(id))],
        ['POST', /^\/products\/batch$/, 'POST /products/batch', (r) => this.batch(r, 0)],
        ['GET', /^\/products\/(\d+)\/variations\/?$/, 'GET /products/{id}/variations', (r, [id]) => this.listProducts(r, Number(id))],
        ['POST', /^\/products\/(\d+)\/variations\/batch$/, 'POST /products/{id}/variations/batch', (r, [id]) => this.batch(r, Number(id))],
      ],
      { ...req, path: p },
      this.metrics,
    );
    return answer ?? wpError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  }

  /** HTTP Basic with the consumer key and secret (or both as query parameters), as over HTTPS. */
  private authenticate(req: SimRequest): SimResponse | null {
    let key = req.query.get('consumer_key');
    let secret = req.query.get('consumer_secret');
    const auth = req.headers.authorization;
    if (auth?.startsWith('Basic ')) {
      const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      key = decoded.slice(0, colon);
      secret = decoded.slice(colon + 1);
    }
    if (!key) return wpError(401, 'woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');
    if (key !== this.consumerKey) return wpError(401, 'woocommerce_rest_authentication_error', 'Consumer key is invalid.');
    if (secret !== this.consumerSecret)
      return wpError(401, 'woocommerce_rest_authentication_error', 'Invalid signature - provided signature does not match.');
    return null;
  }

  private paging(req: SimRequest): { page: number; perPage: number } | SimResponse {
    const page = Number(req.query.get('page') ?? '1');
    const perPage = Number(req.query.get('per_page') ?? '10');
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) {
      return wpError(400, 'rest_invalid_param', 'Invalid parameter(s): per_page', {
        params: { per_page: 'per_page must be between 1 (inclusive) and 100 (inclusive)' },
      });
    }
    if (!Number.isInteger(page) || page < 1) {
      return wpError(400, 'rest_invalid_param', 'Invalid parameter(s): page', {
        params: { page: 'page must be greater than or equal to 1' },
      });
    }
    return { page, perPage };
  }

  private paged<T>(
    items: T[],
    page: number,
    perPage: number,
    req: SimRequest,
  ): SimResponse | { slice: T[]; headers: Record<string, string> } {
    const total = items.length;
    const pages = Math.ceil(total / perPage);
    if (page > pages && total > 0) {
      return wpError(
        400,
        'woocommerce_rest_invalid_page_number',
        'The page number requested is larger than the number of pages available.',
      );
    }
    const links: string[] = [];
    const link = (n: number) => {
      const q = new URLSearchParams(req.query);
      q.set('page', String(n));
      return `<${this.url}${req.path}?${q.toString()}>`;
    };
    if (page > 1) links.push(`${link(page - 1)}; rel="prev"`);
    if (page < pages) links.push(`${link(page + 1)}; rel="next"`);
    const headers: Record<string, string> = { 'X-WP-Total': String(total), 'X-WP-TotalPages': String(pages) };
    if (links.length) headers.Link = links.join(', ');
    return { slice: items.slice((page - 1) * perPage, page * perPage), headers };
  }

  private listOrders(req: SimRequest): SimResponse {
    const paging = this.paging(req);
    if ('status' in paging) return paging;
    const gmt = req.query.get('dates_are_gmt') === 'true' || req.query.get('dates_are_gmt') === '1';
    const after = req.query.get('modified_after');
    const orderby = req.query.get('orderby') ?? 'date';
    const order = req.query.get('order') ?? 'desc';
    const statuses = (req.query.get('status') ?? 'any').split(',');
    if (!['date', 'id', 'include', 'title', 'slug', 'modified'].includes(orderby) || !['asc', 'desc'].includes(order)) {
      return wpError(400, 'rest_invalid_param', 'Invalid parameter(s): orderby, order');
    }
    let afterDate: Date | null = null;
    if (after) {
      // Without `dates_are_gmt` the value is in the site's time zone, which is UTC here.
      afterDate = new Date(/[zZ]|[+-]\d{2}:\d{2}$/.test(after) ? after : `${after}Z`);
      if (Number.isNaN(afterDate.getTime())) return wpError(400, 'rest_invalid_param', 'Invalid parameter(s): modified_after');
    }
    void gmt;
    const key = (o: Order) => (orderby === 'modified' ? o.modified.getTime() : orderby === 'date' ? o.created.getTime() : o.id);
    const list = [...this.orders.values()]
      .filter((o) => statuses.includes('any') || statuses.includes(o.status))
      // WordPress's date query `after` is exclusive, to the second.
      .filter((o) => !afterDate || Math.floor(o.modified.getTime() / 1000) > Math.floor(afterDate.getTime() / 1000))
      .sort((a, b) => (key(a) - key(b) || a.id - b.id) * (order === 'asc' ? 1 : -1));
    const paged = this.paged(list, paging.page, paging.perPage, req);
    if ('status' in paged) return paged;
    this.metrics.orderPages++;
    this.metrics.ordersServed += paged.slice.length;
    return { status: 200, headers: paged.headers, body: paged.slice.map((o) => this.render(o)) };
  }

  private getOrder(id: number): SimResponse {
    const order = this.orders.get(id);
    if (!order) return wpError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    return { status: 200, body: this.render(order) };
  }

  private listRefunds(id: number): SimResponse {
    const order = this.orders.get(id);
    if (!order) return wpError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    const refunds = [...order.refunds].reverse().map((r) => this.renderRefund(order, r));
    return { status: 200, headers: { 'X-WP-Total': String(refunds.length), 'X-WP-TotalPages': refunds.length ? '1' : '0' }, body: refunds };
  }

  private listWebhooks(req: SimRequest): SimResponse {
    const paging = this.paging(req);
    if ('status' in paging) return paging;
    const status = req.query.get('status') ?? 'all';
    const list = [...this.webhooks.values()].filter((w) => status === 'all' || w.status === status).sort((a, b) => b.id - a.id);
    const paged = this.paged(list, paging.page, paging.perPage, req);
    if ('status' in paged) return paged;
    return { status: 200, headers: paged.headers, body: paged.slice.map((w) => this.renderWebhook(w)) };
  }

  /**
   * The webhooks controller (woocommerce/woocommerce includes/rest-api/Controllers/Version1/
   * class-wc-rest-webhooks-v1-controller.php, which v3 extends): topic and URL validated, a secret
   * of 50 characters when none is given, a ping (`webhook_id=N`, unsigned) sent once created; an
   * unknown id is 400 "ID is invalid."; deleting needs `force=true` (no trash); a status change
   * leaves the failure count as it is.
   */
  private createWebhook(req: SimRequest): SimResponse {
    const body = json(req);
    const topic = typeof body.topic === 'string' ? body.topic.toLowerCase() : '';
    const url = typeof body.delivery_url === 'string' ? body.delivery_url : '';
    if (!VALID_TOPIC.test(topic)) {
      return wpError(400, 'woocommerce_rest_shop_webhook_invalid_topic', 'Webhook topic is required and must be valid.');
    }
    if (!/^https?:\/\/[^\s]+$/.test(url)) {
      return wpError(
        400,
        'woocommerce_rest_shop_webhook_invalid_delivery_url',
        'Webhook delivery URL must be a valid URL starting with http:// or https://.',
      );
    }
    const status = (typeof body.status === 'string' ? body.status : 'active') as WooWebhook['status'];
    if (!STATUSES.includes(status)) return wpError(400, 'woocommerce_rest_shop_webhook_invalid_status', 'Webhook status must be valid.');
    const hook = this.addWebhook({
      topic,
      delivery_url: url,
      status,
      secret: typeof body.secret === 'string' && body.secret ? body.secret : randomBytes(38).toString('base64').slice(0, 50),
      name: typeof body.name === 'string' ? body.name : undefined,
    });
    const ping = wooPing(hook.id);
    this.sender.send({
      subscriptionId: String(hook.id),
      topic: 'ping',
      url,
      eventId: `ping-${hook.id}`,
      body: ping.body,
      headers: () => ping.headers,
    });
    return { status: 201, headers: { Location: `${this.url}${BASE}/webhooks/${hook.id}` }, body: this.renderWebhook(hook) };
  }

  private getWebhook(id: number): SimResponse {
    const hook = this.webhooks.get(id);
    return hook
      ? { status: 200, body: this.renderWebhook(hook) }
      : wpError(400, 'woocommerce_rest_shop_webhook_invalid_id', 'ID is invalid.');
  }

  private updateWebhook(id: number, req: SimRequest): SimResponse {
    const hook = this.webhooks.get(id);
    if (!hook) return wpError(400, 'woocommerce_rest_shop_webhook_invalid_id', 'ID is invalid.');
    const body = json(req);
    if (typeof body.topic === 'string' && body.topic) {
      if (!VALID_TOPIC.test(body.topic.toLowerCase()))
        return wpError(400, 'woocommerce_rest_shop_webhook_invalid_topic', 'Webhook topic must be valid.');
      hook.topic = body.topic.toLowerCase();
    }
    if (typeof body.delivery_url === 'string' && body.delivery_url) {
      if (!/^https?:\/\/[^\s]+$/.test(body.delivery_url)) {
        return wpError(
          400,
          'woocommerce_rest_shop_webhook_invalid_delivery_url',
          'Webhook delivery URL must be a valid URL starting with http:// or https://.',
        );
      }
      hook.delivery_url = body.delivery_url;
    }
    if (typeof body.secret === 'string' && body.secret) hook.secret = body.secret;
    if (typeof body.status === 'string' && body.status) {
      if (!STATUSES.includes(body.status as WooWebhook['status']))
        return wpError(400, 'woocommerce_rest_shop_webhook_invalid_status', 'Webhook status must be valid.');
      hook.status = body.status as WooWebhook['status'];
    }
    if (typeof body.name === 'string' && body.name) hook.name = body.name;
    hook.modified = this.now();
    return { status: 200, body: this.renderWebhook(hook) };
  }

  private deleteWebhook(id: number, req: SimRequest): SimResponse {
    const force = req.query.get('force');
    if (force !== 'true' && force !== '1') return wpError(501, 'woocommerce_rest_trash_not_supported', 'Webhooks do not support trashing.');
    const hook = this.webhooks.get(id);
    if (!hook) return wpError(404, 'woocommerce_rest_shop_webhook_invalid_id', 'Invalid ID.');
    this.webhooks.delete(id);
    return { status: 200, body: this.renderWebhook(hook) };
  }

  private listProducts(req: SimRequest, parentId: number): SimResponse {
    const paging = this.paging(req);
    if ('status' in paging) return paging;
    if (parentId && !this.products.has(parentId)) return wpError(404, 'woocommerce_rest_product_invalid_id', 'Invalid ID.');
    const skus = req.query
      .get('sku')
      ?.split(',')
      .map((s) => s.trim());
    const list = [...this.products.values()]
      .filter((p) => p.parentId === parentId)
      .filter((p) => !skus || skus.includes(p.sku))
      .sort((a, b) => b.id - a.id);
    const paged = this.paged(list, paging.page, paging.perPage, req);
    if ('status' in paged) return paged;
    return { status: 200, headers: paged.headers, body: paged.slice.map((p) => this.renderProduct(p)) };
  }

  private getProduct(id: number): SimResponse {
    const p = this.products.get(id);
    return p && !p.parentId
      ? { status: 200, body: this.renderProduct(p) }
      : wpError(404, 'woocommerce_rest_product_invalid_id', 'Invalid ID.');
  }

  /** `POST /products/batch` and `/products/{id}/variations/batch`: `update` with `stock_quantity` is what is modelled. */
  private batch(req: SimRequest, parentId: number): SimResponse {
    const body = json(req);
    const items = (k: string) => (Array.isArray(body[k]) ? (body[k] as unknown[]) : []);
    const total = items('create').length + items('update').length + items('delete').length;
    if (total > 100) {
      return wpError(413, 'woocommerce_rest_request_entity_too_large', 'Unable to accept more than 100 items for this request.');
    }
    if (items('create').length || items('delete').length) {
      return wpError(400, 'rest_invalid_param', 'The simulator models only `update` in a batch');
    }
    const update = items('update').map((raw) => {
      const item = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
      const id = Number(item.id);
      const p = this.products.get(id);
      if (!p || p.parentId !== parentId) {
        const code = parentId ? 'woocommerce_rest_product_variation_invalid_id' : 'woocommerce_rest_product_invalid_id';
        return { id: Number.isFinite(id) ? id : 0, error: { code, message: 'Invalid ID.', data: { status: 400 } } };
      }
      if (item.stock_quantity !== undefined) {
        const after = Number(item.stock_quantity);
        if (!Number.isInteger(after))
          return { id, error: { code: 'rest_invalid_param', message: 'Invalid parameter(s): stock_quantity', data: { status: 400 } } };
        this.stockWrites.push({
          at: new Date(),
          platform: 'woocommerce',
          sku: p.sku,
          target: String(id),
          location: null,
          before: p.stock,
          after,
          applied: true,
          idempotencyKey: null,
          replayed: false,
        });
        p.stock = after;
      }
      p.modified = this.now();
      const rendered = this.renderProduct(p);
      // Saving a product or a variation fires `product.updated` (the hooks `woocommerce_update_product`
      // and `woocommerce_update_product_variation`): the shop's echo of the write.
      this.emitBody('product.updated', JSON.stringify(rendered));
      return rendered;
    });
    return { status: 200, body: { update } };
  }

  // ---- shapes ---------------------------------------------------------------------------------

  private total(order: Order): string {
    return fromCents(sumCents([...order.lines.flatMap((l) => [l.total, l.total_tax]), order.shipping?.total ?? '0.00']));
  }

  private render(order: Order): Record<string, unknown> {
    // The published order shape (WooCommerce REST API docs, "Retrieve an order"), built by the
    // webhook-ingest factory; what the factory fixes (ids, dates, totals with shipping) set here.
    const base = wooOrder({
      id: order.id,
      status: order.status,
      date_modified_gmt: wooDate(order.modified),
      email: order.email,
      line_items: order.lines.map((l) => ({
        product_id: l.product_id,
        variation_id: l.variation_id,
        sku: l.sku,
        name: l.name,
        quantity: l.quantity,
        total: l.total,
        total_tax: l.total_tax,
      })),
    });
    const created = wooDate(order.created);
    const lineItems = (base.line_items as Array<Record<string, unknown>>).map((li, i) => ({ ...li, id: order.lines[i]!.id }));
    const paid = ['processing', 'completed', 'refunded'].includes(order.status) ? created : null;
    return {
      ...base,
      number: String(order.id),
      order_key: order.orderKey,
      date_created: created,
      date_created_gmt: created,
      date_paid: paid,
      date_paid_gmt: paid,
      shipping_total: order.shipping?.total ?? '0.00',
      total: this.total(order),
      line_items: lineItems,
      shipping_lines: order.shipping
        ? [
            {
              id: order.shipping.id,
              method_title: 'Flat rate',
              method_id: 'flat_rate',
              instance_id: '1',
              total: order.shipping.total,
              total_tax: '0.00',
              taxes: [],
              meta_data: [],
            },
          ]
        : [],
      // The order's summary of each refund: the docs' property table names `id`, `reason`, `total` (negative).
      refunds: order.refunds.map((r) => ({ id: r.id, reason: r.reason, total: fromCents(-toCents(r.amount)) })),
      payment_url: `${this.url}/checkout/order-pay/${order.id}/`,
      _links: {
        self: [{ href: `${this.url}${BASE}/orders/${order.id}` }],
        collection: [{ href: `${this.url}${BASE}/orders` }],
      },
    };
  }

  /** The refund resource (WooCommerce REST API docs, "Retrieve a refund" / "List all refunds"). */
  private renderRefund(order: Order, r: Refund): Record<string, unknown> {
    const created = wooDate(r.created);
    return {
      id: r.id,
      date_created: created,
      date_created_gmt: created,
      amount: r.amount,
      reason: r.reason,
      refunded_by: 1,
      refunded_payment: false,
      meta_data: [],
      line_items: r.lines.map((l) => ({
        id: l.id,
        name: l.line.name,
        product_id: l.line.product_id,
        variation_id: l.line.variation_id,
        quantity: -l.quantity,
        tax_class: '',
        subtotal: l.total,
        subtotal_tax: l.total_tax,
        total: l.total,
        total_tax: l.total_tax,
        taxes: [],
        meta_data: [{ id: l.id + 10_000, key: '_refunded_item_id', value: String(l.line.id) }],
        sku: l.line.sku,
        price: toCents(l.total) / 100 / l.quantity,
      })),
      _links: {
        self: [{ href: `${this.url}${BASE}/orders/${order.id}/refunds/${r.id}` }],
        collection: [{ href: `${this.url}${BASE}/orders/${order.id}/refunds` }],
        up: [{ href: `${this.url}${BASE}/orders/${order.id}` }],
      },
    };
  }

  /** The product or variation (WooCommerce REST API docs, "Retrieve a product"), by the webhook-ingest factory. */
  private renderProduct(p: Product): Record<string, unknown> {
    const base = wooProduct({
      id: p.id,
      name: p.name,
      sku: p.sku,
      regular_price: p.price,
      manage_stock: p.stock !== null,
      stock_quantity: p.stock,
      date_modified_gmt: wooDate(p.modified),
    });
    return {
      ...base,
      type: p.parentId ? 'variation' : p.variations.length ? 'variable' : 'simple',
      parent_id: p.parentId,
      variations: p.variations,
      stock_status: p.stock === null || p.stock > 0 ? 'instock' : 'outofstock',
      _links: {
        self: [{ href: `${this.url}${BASE}/products/${p.parentId ? `${p.parentId}/variations/${p.id}` : p.id}` }],
        collection: [{ href: `${this.url}${BASE}/products` }],
      },
    };
  }

  /** The webhook resource (WooCommerce REST API docs, "Webhook properties"). */
  private renderWebhook(w: WooWebhook): Record<string, unknown> {
    const [resource, event] = w.topic.split('.');
    return {
      id: w.id,
      name: w.name,
      status: w.status,
      topic: w.topic,
      resource,
      event,
      hooks: [`woocommerce_${event === 'created' ? 'new' : event === 'updated' ? 'update' : event}_${resource}`],
      delivery_url: w.delivery_url,
      date_created: wooDate(w.created),
      date_created_gmt: wooDate(w.created),
      date_modified: wooDate(w.modified),
      date_modified_gmt: wooDate(w.modified),
      _links: { self: [{ href: `${this.url}${BASE}/webhooks/${w.id}` }], collection: [{ href: `${this.url}${BASE}/webhooks` }] },
    };
  }

  // ---- webhooks out ----------------------------------------------------------------------------

  private emit(topic: string, order: Order): void {
    // The payload is the order as the REST API renders it at the time of the change.
    this.emitBody(topic, JSON.stringify(this.render(order)));
  }

  private emitBody(topic: string, body: string): void {
    const eventId = randomBytes(8).toString('hex');
    for (const hook of this.webhooks.values()) {
      if (hook.status !== 'active' || hook.topic !== topic) continue;
      this.sender.send({
        subscriptionId: String(hook.id),
        topic,
        url: hook.delivery_url,
        eventId,
        body,
        headers: () => ({
          ...wooHeaders(body, topic, hook.secret),
          'X-WC-Webhook-Source': `${this.url}/`,
          'X-WC-Webhook-ID': String(hook.id),
        }),
      });
    }
  }

  /** WooCommerce never retries; it counts consecutive failures and disables the webhook past the limit. */
  protected afterDelivery(out: Outgoing, attempt: DeliveryAttempt): null {
    const hook = this.webhooks.get(Number(out.subscriptionId));
    // A ping's answer is not logged as a delivery: it counts no failure.
    if (!hook || out.topic === 'ping') return null;
    if (attempt.status !== null && attempt.status >= 200 && attempt.status < 303) hook.failureCount = 0;
    else if (hook.failureCount > this.maxFailures) hook.status = 'disabled';
    else hook.failureCount++;
    return null;
  }

  // ---- helpers --------------------------------------------------------------------------------

  /**
   * WooCommerce takes an order's stock when it reaches processing, completed or on-hold
   * (`wc_maybe_reduce_stock_levels`, the order then carries `_order_stock_reduced`) and gives it back
   * when it is cancelled or goes back to pending (`wc_maybe_increase_stock_levels`), each line what
   * it still holds (woocommerce/woocommerce includes/wc-stock-functions.php).
   */
  private syncStock(order: Order): void {
    const takes = ['processing', 'completed', 'on-hold'].includes(order.status);
    const gives = ['cancelled', 'pending'].includes(order.status);
    if (takes && !this.stockReduced.has(order.id)) {
      this.stockReduced.add(order.id);
      for (const l of order.lines) {
        l.reduced = l.quantity;
        this.moveStock(l, -l.quantity);
      }
    } else if (gives && this.stockReduced.has(order.id)) {
      this.stockReduced.delete(order.id);
      for (const l of order.lines) {
        this.moveStock(l, l.reduced);
        l.reduced = 0;
      }
    }
  }

  private moveStock(line: Line, delta: number): void {
    const p = this.products.get(line.variation_id || line.product_id);
    if (!p || p.stock === null) return;
    p.stock += delta;
    p.modified = this.now();
  }

  private order(id: number): Order {
    const order = this.orders.get(id);
    if (!order) throw new Error(`No order ${id}`);
    return order;
  }

  private bySku(sku: string): Product | undefined {
    for (const p of this.products.values()) if (p.sku === sku) return p;
    return undefined;
  }
}
