import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:https';
import {
  GraphQLError,
  Kind,
  execute,
  parse,
  validate,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLResolveInfo,
  type OperationDefinitionNode,
} from 'graphql';
import { shopifyHeaders, shopifyOrderBody } from '../../../services/webhook-ingest/test/platform.factories';
import type { DeliveryAttempt, Outgoing, WebhookFaults } from './deliveries';
import { SimulatedShop } from './simulated-shop';
import { closeServer, listenHttps, type SimRequest, type SimResponse } from './https';
import { fromCents, sumCents, toCents } from './money';
import { SHOPIFY_API_VERSION, shopifySchema } from './shopify-schema';
import { CostBucket, CostError, SINGLE_QUERY_MAX_COST, queryCost } from './shopify-cost';

/*
 * A Shopify shop speaking the GraphQL Admin API (`/admin/api/2026-04/graphql.json`, header
 * `X-Shopify-Access-Token`) over HTTPS, executed by graphql-js on the schema in shopify-schema.ts.
 *
 * Sources of the shapes and rules:
 * - GraphQL Admin API reference, https://shopify.dev/docs/api/admin-graphql/2026-04: the objects
 *   and arguments (see shopify-schema.ts); `orders(query:)` search syntax (`updated_at:>=…`) from
 *   "Shopify API search syntax"; cursor pagination with `pageInfo { hasNextPage endCursor }`.
 * - `inventorySetQuantities` (2026-04): `changeFromQuantity` required on each quantity (null skips
 *   the check), a stale one answers userError `CHANGE_FROM_QUANTITY_STALE`; the `@idempotent(key:)`
 *   directive mandatory from 2026-04 (changelog "Making idempotency mandatory for inventory
 *   adjustments and refund mutations"), a key reused with other arguments answers
 *   `IDEMPOTENCY_KEY_PARAMETER_MISMATCH`; reasons from the mutation's reference; input arrays of at
 *   most 250 ("MAX_INPUT_SIZE_EXCEEDED", Shopify's input array limit).
 * - The cost bucket: shopify-cost.ts.
 * - Webhooks: Shopify's webhook reference (https://shopify.dev/docs/api/webhooks, 2026-07) for the
 *   bodies (the order and refund REST shapes of the published `orders/*` and `refunds/create`
 *   samples, built by the webhook-ingest factories in services/webhook-ingest/test/platform.factories.ts)
 *   and headers (X-Shopify-Topic, -Hmac-Sha256 = base64 HMAC-SHA256 of the body with the app's
 *   secret, -Shop-Domain, -API-Version, -Webhook-Id, -Event-Id, -Triggered-At); "Troubleshooting
 *   webhooks": a delivery is answered within 5 s with a 2xx, else retried 8 times over 4 hours,
 *   after which a subscription made through the API is deleted; the changelog "Updates to webhook
 *   retry mechanism" (2024-09-10): exponential backoff, each retry with the original payload, to the
 *   address the subscription had when the event fired. The simulator compresses those 4 hours into
 *   `retryScheduleMs` (doubling waits by default).
 * - REST bodies carry times with the shop's offset (here -06:00), GraphQL `DateTime` in UTC.
 */

export interface ShopifyOptions {
  accessToken?: string;
  /** The app's client secret: it signs the webhooks. */
  apiSecret?: string;
  shopDomain?: string;
  /** Bucket size and restore rate per second (Standard plan: 2000 and 100; 1000 and 50 for a smaller one). */
  bucket?: { maximumAvailable?: number; restoreRate?: number };
  /** Waits before each of the retries (8, as Shopify makes over 4 hours). */
  retryScheduleMs?: number[];
  faults?: WebhookFaults;
}

type Topic =
  | 'ORDERS_CREATE'
  | 'ORDERS_UPDATED'
  | 'ORDERS_PAID'
  | 'ORDERS_CANCELLED'
  | 'ORDERS_FULFILLED'
  | 'ORDERS_PARTIALLY_FULFILLED'
  | 'REFUNDS_CREATE'
  | 'PRODUCTS_UPDATE'
  | 'INVENTORY_LEVELS_UPDATE';

const TOPIC_HEADER: Record<Topic, string> = {
  ORDERS_CREATE: 'orders/create',
  ORDERS_UPDATED: 'orders/updated',
  ORDERS_PAID: 'orders/paid',
  ORDERS_CANCELLED: 'orders/cancelled',
  ORDERS_FULFILLED: 'orders/fulfilled',
  ORDERS_PARTIALLY_FULFILLED: 'orders/partially_fulfilled',
  REFUNDS_CREATE: 'refunds/create',
  PRODUCTS_UPDATE: 'products/update',
  INVENTORY_LEVELS_UPDATE: 'inventory_levels/update',
};

const REASONS = new Set([
  'correction',
  'cycle_count_available',
  'damaged',
  'movement_created',
  'movement_updated',
  'movement_received',
  'movement_canceled',
  'other',
  'promotion',
  'quality_control',
  'received',
  'reservation_created',
  'reservation_deleted',
  'reservation_updated',
  'restock',
  'safety_stock',
  'shrinkage',
]);

type Financial = 'pending' | 'authorized' | 'paid' | 'partially_refunded' | 'refunded' | 'voided';

interface Location {
  id: number;
  name: string;
  active: boolean;
}

interface Variant {
  id: number;
  productId: number;
  itemId: number;
  sku: string;
  title: string;
  price: string;
  levels: Map<number, { available: number; updatedAt: Date }>;
}

interface Line {
  id: number;
  variant: Variant | null;
  sku: string;
  title: string;
  quantity: number;
  price: string;
}

interface Refund {
  id: number;
  transactionId: number;
  createdAt: Date;
  note: string | null;
  amount: string;
  lines: Array<{ id: number; line: Line; quantity: number; restockType: 'return' | 'no_restock' | 'cancel'; subtotal: string }>;
}

interface Order {
  id: number;
  number: number;
  email: string;
  createdAt: Date;
  updatedAt: Date;
  cancelledAt: Date | null;
  financial: Financial;
  lines: Line[];
  shipping: { id: number; price: string } | null;
  refunds: Refund[];
}

export interface ShopifySubscription {
  id: number;
  topic: Topic;
  uri: string;
  format: 'JSON' | 'XML';
  filter: string | null;
  includeFields: string[];
  createdAt: Date;
  updatedAt: Date;
  /** Made through the API (deleted after its retries fail) or in the admin. */
  viaApi: boolean;
}

export interface ShopifyLineSpec {
  sku: string;
  quantity: number;
  /** Unit price, a decimal string (tax included); defaults to the variant's price. */
  price?: string;
  title?: string;
}

export interface ShopifyOrderSpec {
  financialStatus?: Financial;
  lines: ShopifyLineSpec[];
  shipping?: string;
  email?: string;
}

const gid = (type: string, id: number) => `gid://shopify/${type}/${id}`;
const idOf = (value: unknown, type: string): number | null => {
  const m = new RegExp(`^gid://shopify/${type}/(\\d+)$`).exec(String(value));
  return m ? Number(m[1]) : null;
};
const money = (amount: string) => ({ shopMoney: { amount, currencyCode: 'USD' }, presentmentMoney: { amount, currencyCode: 'USD' } });
const moneySet = (amount: string) => ({
  shop_money: { amount, currency_code: 'USD' },
  presentment_money: { amount, currency_code: 'USD' },
});
/** REST time with the shop's offset: `2026-03-12T10:04:35-06:00`. */
const restTime = (d: Date) => `${new Date(d.getTime() - 6 * 3_600_000).toISOString().slice(0, 19)}-06:00`;
const utc = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;

/** Shopify's search syntax, the part the simulator reads: `field:value`, `field:>=value`, terms joined by AND. */
function parseSearch(query: string | undefined): Array<{ field: string; op: string; value: string }> {
  if (!query) return [];
  const terms = query.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) ?? [];
  return terms
    .filter((t) => t.toUpperCase() !== 'AND')
    .map((t) => {
      const m = /^([a-z_]+):(>=|<=|>|<)?(.*)$/.exec(t);
      if (!m) return { field: 'default', op: '=', value: t };
      return { field: m[1]!, op: m[2] ?? '=', value: m[3]!.replace(/^["']|["']$/g, '') };
    });
}

function compare(actual: number | string, op: string, wanted: number | string): boolean {
  switch (op) {
    case '>=':
      return actual >= wanted;
    case '<=':
      return actual <= wanted;
    case '>':
      return actual > wanted;
    case '<':
      return actual < wanted;
    default:
      return actual === wanted;
  }
}

const encodeCursor = (key: unknown[]) => Buffer.from(JSON.stringify(key)).toString('base64');
const decodeCursor = (cursor: string): unknown[] => {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8'));
    if (Array.isArray(v)) return v;
  } catch {
    // answered below
  }
  throw new GraphQLError('Invalid cursor for current pagination sort.');
};

/** A connection over `items` sorted by `key` (tuples compared in order), resumed after a cursor. */
function connection<T>(
  items: T[],
  key: (item: T) => Array<number | string>,
  args: { first?: number | null; after?: string | null; reverse?: boolean | null },
) {
  const cmp = (a: Array<number | string>, b: Array<number | string>) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return 0;
  };
  const dir = args.reverse ? -1 : 1;
  const sorted = [...items].sort((a, b) => cmp(key(a), key(b)) * dir);
  const after = args.after ? (decodeCursor(args.after) as Array<number | string>) : null;
  const rest = after ? sorted.filter((i) => cmp(key(i), after) * dir > 0) : sorted;
  const first = args.first ?? rest.length;
  if (first > 250) throw new GraphQLError('The first argument must not exceed 250.');
  const page = rest.slice(0, first);
  const edges = page.map((node) => ({ cursor: encodeCursor(key(node)), node }));
  return {
    edges,
    nodes: page,
    pageInfo: {
      hasNextPage: rest.length > page.length,
      hasPreviousPage: Boolean(after) && sorted.length > rest.length,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

export class ShopifyShop extends SimulatedShop {
  readonly accessToken: string;
  readonly apiSecret: string;
  readonly shopDomain: string;
  readonly apiVersion = SHOPIFY_API_VERSION;
  /** `inventorySetQuantities` calls answered from an idempotency key already used. */
  idempotentReplays = 0;
  readonly subscriptions = new Map<number, ShopifySubscription>();
  readonly bucket: CostBucket;
  private readonly orders = new Map<number, Order>();
  private readonly variants = new Map<number, Variant>();
  private readonly locations = new Map<number, Location>();
  private readonly idempotency = new Map<string, { fingerprint: string; result: unknown }>();
  private readonly retrySchedule: number[];
  private seq = 6_100_000_000_000;
  private orderNumber = 1000;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    options: ShopifyOptions,
  ) {
    super('shopify', options.faults);
    this.accessToken = options.accessToken ?? `shpat_${randomBytes(16).toString('hex')}`;
    this.apiSecret = options.apiSecret ?? randomBytes(24).toString('hex');
    this.shopDomain = options.shopDomain ?? 'tienda-sim.myshopify.com';
    this.bucket = new CostBucket(options.bucket?.maximumAvailable ?? 2000, options.bucket?.restoreRate ?? 100);
    this.retrySchedule = options.retryScheduleMs ?? [20, 40, 80, 160, 320, 640, 1280, 2560];
    this.addLocation('Bodega Central');
  }

  static async start(options: ShopifyOptions = {}): Promise<ShopifyShop> {
    let shop: ShopifyShop | undefined;
    const { server, url } = await listenHttps((req) => shop!.handle(req));
    shop = new ShopifyShop(server, url, options);
    return shop;
  }

  /** The GraphQL endpoint at the pinned version. */
  get graphqlUrl(): string {
    return `${this.url}/admin/api/${this.apiVersion}/graphql.json`;
  }

  async close(): Promise<void> {
    await this.sender.close();
    await closeServer(this.server);
  }

  // ---- test controls ----------------------------------------------------------------------------

  addLocation(name: string, active = true): string {
    const id = this.next();
    this.locations.set(id, { id, name, active });
    return gid('Location', id);
  }

  /** The first active location's GID (the shop's only one unless more were added). */
  get primaryLocation(): string {
    const first = [...this.locations.values()].find((l) => l.active);
    return gid('Location', first!.id);
  }

  /** A product with one variant and its inventory item, stocked at the primary location (or the ones given). */
  addVariant(input: { sku: string; price?: string; title?: string; stock?: number | Record<string, number> }): {
    variantId: string;
    inventoryItemId: string;
  } {
    const variant: Variant = {
      id: this.next(),
      productId: this.next(),
      itemId: this.next(),
      sku: input.sku,
      title: input.title ?? `Producto ${input.sku}`,
      price: input.price ?? '10.00',
      levels: new Map(),
    };
    const stock = typeof input.stock === 'object' ? input.stock : { [this.primaryLocation]: input.stock ?? 0 };
    for (const [location, available] of Object.entries(stock)) {
      variant.levels.set(idOf(location, 'Location')!, { available, updatedAt: this.now() });
    }
    this.variants.set(variant.id, variant);
    return { variantId: gid('ProductVariant', variant.id), inventoryItemId: gid('InventoryItem', variant.itemId) };
  }

  stockOf(sku: string, location = this.primaryLocation): number | null {
    return this.bySku(sku)?.levels.get(idOf(location, 'Location')!)?.available ?? null;
  }

  setStock(sku: string, available: number, location = this.primaryLocation): void {
    const v = this.bySku(sku);
    if (!v) throw new Error(`No variant with SKU ${sku}`);
    v.levels.set(idOf(location, 'Location')!, { available, updatedAt: this.now() });
  }

  /** An order as checkout makes it: stock taken at the primary location, `orders/create` (and `orders/paid`) sent. */
  createOrder(spec: ShopifyOrderSpec): Record<string, unknown> {
    const now = this.now();
    const lines = spec.lines.map((l): Line => {
      const variant =
        this.bySku(l.sku) ?? this.variants.get(idOf(this.addVariant({ sku: l.sku, price: l.price }).variantId, 'ProductVariant')!)!;
      return {
        id: this.next(),
        variant,
        sku: l.sku,
        title: l.title ?? variant.title,
        quantity: l.quantity,
        price: l.price ?? variant.price,
      };
    });
    const order: Order = {
      id: this.next(),
      number: ++this.orderNumber,
      email: spec.email ?? 'jon@example.com',
      createdAt: now,
      updatedAt: now,
      cancelledAt: null,
      financial: spec.financialStatus ?? 'paid',
      lines,
      shipping: spec.shipping ? { id: this.next(), price: spec.shipping } : null,
      refunds: [],
    };
    this.orders.set(order.id, order);
    for (const l of lines) this.moveStock(l.variant, -l.quantity);
    this.emitOrder(order, order.financial === 'paid' ? ['ORDERS_CREATE', 'ORDERS_PAID'] : ['ORDERS_CREATE']);
    return this.restOrder(order);
  }

  updateOrder(id: number | string, change: { financialStatus?: Financial }): Record<string, unknown> {
    const order = this.order(id);
    const wasPaid = order.financial === 'paid';
    if (change.financialStatus) order.financial = change.financialStatus;
    order.updatedAt = this.now();
    this.emitOrder(order, !wasPaid && order.financial === 'paid' ? ['ORDERS_PAID', 'ORDERS_UPDATED'] : ['ORDERS_UPDATED']);
    return this.restOrder(order);
  }

  /** Cancels (restocking by default, as the admin offers): `orders/cancelled` and `orders/updated`. */
  cancelOrder(id: number | string, options: { restock?: boolean } = {}): Record<string, unknown> {
    const order = this.order(id);
    order.cancelledAt = this.now();
    order.updatedAt = order.cancelledAt;
    if (order.financial === 'pending' || order.financial === 'authorized') order.financial = 'voided';
    if (options.restock ?? true) for (const l of order.lines) this.moveStock(l.variant, l.quantity);
    this.emitOrder(order, ['ORDERS_CANCELLED', 'ORDERS_UPDATED']);
    return this.restOrder(order);
  }

  /** A refund: `refunds/create` with the refund, then `orders/updated`; `return` lines go back to stock. */
  refundOrder(
    id: number | string,
    spec: {
      lines?: Array<{ sku: string; quantity: number; restockType?: 'return' | 'no_restock' | 'cancel' }>;
      amount?: string;
      note?: string;
    } = {},
  ): Record<string, unknown> {
    const order = this.order(id);
    const lines = (spec.lines ?? []).map((r) => {
      const line = order.lines.find((l) => l.sku === r.sku);
      if (!line) throw new Error(`Order ${order.id} has no line ${r.sku}`);
      return {
        id: this.next(),
        line,
        quantity: r.quantity,
        restockType: r.restockType ?? 'return',
        subtotal: fromCents(toCents(line.price) * r.quantity),
      };
    });
    const amount = spec.amount ?? fromCents(sumCents(lines.map((l) => l.subtotal)));
    const refund: Refund = { id: this.next(), transactionId: this.next(), createdAt: this.now(), note: spec.note ?? null, amount, lines };
    order.refunds.push(refund);
    for (const l of lines) if (l.restockType !== 'no_restock') this.moveStock(l.line.variant, l.quantity);
    order.financial = sumCents(order.refunds.map((r) => r.amount)) >= toCents(this.total(order)) ? 'refunded' : 'partially_refunded';
    order.updatedAt = refund.createdAt;
    const body = JSON.stringify(this.restRefund(order, refund));
    this.emit('REFUNDS_CREATE', body, refund.createdAt);
    this.emitOrder(order, ['ORDERS_UPDATED']);
    return JSON.parse(body) as Record<string, unknown>;
  }

  /** The order as its webhooks carry it (Shopify's REST order shape). */
  orderJson(id: number | string): Record<string, unknown> {
    return this.restOrder(this.order(id));
  }

  /** A subscription made in the shop's admin (never deleted for failures) unless `viaApi`. */
  addSubscription(input: { topic: Topic; uri: string; viaApi?: boolean }): string {
    const now = this.now();
    const sub: ShopifySubscription = {
      id: this.next(),
      topic: input.topic,
      uri: input.uri,
      format: 'JSON',
      filter: null,
      includeFields: [],
      createdAt: now,
      updatedAt: now,
      viaApi: input.viaApi ?? false,
    };
    this.subscriptions.set(sub.id, sub);
    return gid('WebhookSubscription', sub.id);
  }

  // ---- the GraphQL endpoint -------------------------------------------------------------------

  private async handle(req: SimRequest): Promise<SimResponse> {
    this.metrics.requests++;
    const m = /^\/admin\/api\/([^/]+)\/graphql\.json$/.exec(req.path);
    if (!m || m[1] !== this.apiVersion) return { status: 404, body: { errors: 'Not Found' } };
    if (req.method !== 'POST') return { status: 405, body: { errors: 'Method Not Allowed' } };
    if (req.headers['x-shopify-access-token'] !== this.accessToken) {
      this.metrics.unauthorized++;
      return { status: 401, body: { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' } };
    }
    const failure = this.injectedFailure();
    if (failure) return failure;
    let request: { query?: string; variables?: Record<string, unknown> | null; operationName?: string | null };
    try {
      request = JSON.parse(req.body.toString('utf8')) as typeof request;
    } catch {
      return { status: 400, body: { errors: 'Invalid JSON in request body' } };
    }
    let document: DocumentNode;
    try {
      document = parse(request.query ?? '');
    } catch (e) {
      return { status: 200, body: { errors: [{ message: (e as GraphQLError).message, extensions: { code: 'PARSE_ERROR' } }] } };
    }
    const invalid = validate(shopifySchema, document);
    if (invalid.length) return { status: 200, body: { errors: invalid.map((e) => e.toJSON()) } };
    const operation = document.definitions.find(
      (d): d is OperationDefinitionNode =>
        d.kind === Kind.OPERATION_DEFINITION && (!request.operationName || d.name?.value === request.operationName),
    );
    if (!operation) return { status: 200, body: { errors: [{ message: 'No operation to run' }] } };
    const fragments = Object.fromEntries(
      document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
    );
    const variables = request.variables ?? {};
    let requested: number;
    try {
      requested = queryCost(shopifySchema, operation, fragments, variables);
    } catch (e) {
      return {
        status: 200,
        body: { errors: [{ message: e instanceof CostError ? e.message : String(e), extensions: { code: 'BAD_REQUEST' } }] },
      };
    }
    if (requested > SINGLE_QUERY_MAX_COST) {
      return {
        status: 200,
        body: {
          errors: [
            {
              message: `Query cost is ${requested}, which exceeds the single query max cost limit (${SINGLE_QUERY_MAX_COST}).`,
              extensions: { code: 'MAX_COST_EXCEEDED', cost: requested, maxCost: SINGLE_QUERY_MAX_COST },
            },
          ],
        },
      };
    }
    if (!this.bucket.take(requested)) {
      this.metrics.throttled++;
      return {
        status: 200,
        body: {
          errors: [
            { message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/limits#rate-limits' } },
          ],
          extensions: { cost: { requestedQueryCost: requested, actualQueryCost: null, throttleStatus: this.bucket.status() } },
        },
      };
    }
    const result = await execute({
      schema: shopifySchema,
      document,
      rootValue: this.root(),
      variableValues: variables,
      operationName: request.operationName ?? undefined,
    });
    const actual =
      operation.operation === 'mutation' ? requested : queryCost(shopifySchema, operation, fragments, variables, result.data ?? null);
    this.bucket.giveBack(Math.max(0, requested - actual));
    for (const sel of operation.selectionSet.selections)
      if (sel.kind === Kind.FIELD) this.metrics.byRoute[sel.name.value] = (this.metrics.byRoute[sel.name.value] ?? 0) + 1;
    return {
      status: 200,
      body: {
        ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}),
        data: result.data ?? null,
        extensions: { cost: { requestedQueryCost: requested, actualQueryCost: actual, throttleStatus: this.bucket.status() } },
      },
    };
  }

  private root(): Record<string, unknown> {
    type Args = Record<string, unknown>;
    return {
      shop: () => ({ id: gid('Shop', 1), name: 'Tienda simulada', myshopifyDomain: this.shopDomain, currencyCode: 'USD' }),
      orders: (args: Args) => {
        const terms = parseSearch(args.query as string | undefined);
        const list = [...this.orders.values()].filter((o) =>
          terms.every((t) => {
            if (t.field === 'updated_at' || t.field === 'created_at') {
              const at = Math.floor((t.field === 'updated_at' ? o.updatedAt : o.createdAt).getTime() / 1000);
              const wanted = new Date(t.value).getTime();
              if (Number.isNaN(wanted)) throw new GraphQLError(`Invalid date in search: ${t.value}`);
              return compare(at, t.op, Math.floor(wanted / 1000));
            }
            if (t.field === 'id') return compare(o.id, t.op, Number(t.value));
            if (t.field === 'name') return `#${o.number}` === t.value || String(o.number) === t.value;
            if (t.field === 'financial_status') return o.financial === t.value;
            if (t.field === 'status')
              return (
                t.value === 'any' ||
                (t.value === 'cancelled' ? o.cancelledAt !== null : t.value === 'open' ? o.cancelledAt === null : false)
              );
            return true;
          }),
        );
        // Sort keys the simulator does not model (customer name, destination…) sort by id.
        const sortKey = (args.sortKey as string | undefined) ?? 'PROCESSED_AT';
        const key = (o: Order): Array<number | string> => {
          const second = (d: Date) => Math.floor(d.getTime() / 1000);
          if (sortKey === 'UPDATED_AT') return [second(o.updatedAt), o.id];
          if (sortKey === 'CREATED_AT' || sortKey === 'PROCESSED_AT') return [second(o.createdAt), o.id];
          if (sortKey === 'ORDER_NUMBER') return [o.number, o.id];
          if (sortKey === 'TOTAL_PRICE') return [toCents(this.total(o)), o.id];
          return [o.id];
        };
        const page = connection(list, key, args as { first?: number; after?: string; reverse?: boolean });
        this.metrics.orderPages++;
        this.metrics.ordersServed += page.nodes.length;
        return {
          ...page,
          edges: page.edges.map((e) => ({ ...e, node: this.gqlOrder(e.node) })),
          nodes: page.nodes.map((o) => this.gqlOrder(o)),
        };
      },
      order: (args: Args) => {
        const order = this.orders.get(idOf(args.id, 'Order') ?? -1);
        return order ? this.gqlOrder(order) : null;
      },
      webhookSubscriptions: (args: Args) => {
        const topics = args.topics as string[] | undefined;
        const list = [...this.subscriptions.values()].filter(
          (s) => (!topics || topics.includes(s.topic)) && (!args.uri || s.uri === args.uri),
        );
        return this.mapConnection(
          connection(list, (s) => [s.id], args),
          (s) => this.gqlSubscription(s),
        );
      },
      webhookSubscription: (args: Args) => {
        const s = this.subscriptions.get(idOf(args.id, 'WebhookSubscription') ?? -1);
        return s ? this.gqlSubscription(s) : null;
      },
      locations: (args: Args) => {
        const list = [...this.locations.values()].filter((l) => l.active || args.includeInactive === true);
        return this.mapConnection(
          connection(list, (l) => [l.id], args),
          (l) => this.gqlLocation(l),
        );
      },
      location: (args: Args) => {
        const l = args.id
          ? this.locations.get(idOf(args.id, 'Location') ?? -1)
          : this.locations.get(idOf(this.primaryLocation, 'Location')!);
        return l ? this.gqlLocation(l) : null;
      },
      productVariants: (args: Args) =>
        this.mapConnection(
          connection(this.searchVariants(args.query as string | undefined), (v) => [v.id], args),
          (v) => this.gqlVariant(v),
        ),
      inventoryItems: (args: Args) =>
        this.mapConnection(
          connection(this.searchVariants(args.query as string | undefined), (v) => [v.itemId], args),
          (v) => this.gqlItem(v),
        ),
      inventoryItem: (args: Args) => {
        const itemId = idOf(args.id, 'InventoryItem');
        const v = [...this.variants.values()].find((x) => x.itemId === itemId);
        return v ? this.gqlItem(v) : null;
      },
      webhookSubscriptionCreate: (args: Args) => this.createSubscription(args),
      webhookSubscriptionDelete: (args: Args) => {
        const id = idOf(args.id, 'WebhookSubscription');
        if (id === null || !this.subscriptions.delete(id)) {
          return { deletedWebhookSubscriptionId: null, userErrors: [{ field: ['id'], message: 'Webhook subscription does not exist' }] };
        }
        return { deletedWebhookSubscriptionId: args.id, userErrors: [] };
      },
      inventorySetQuantities: (args: Args, _ctx: unknown, info: GraphQLResolveInfo) => this.setQuantities(args.input as SetInput, info),
    };
  }

  private mapConnection<T>(conn: ReturnType<typeof connection<T>>, map: (item: T) => unknown) {
    return { ...conn, edges: conn.edges.map((e) => ({ cursor: e.cursor, node: map(e.node) })), nodes: conn.nodes.map(map) };
  }

  private searchVariants(query: string | undefined): Variant[] {
    const terms = parseSearch(query);
    return [...this.variants.values()].filter((v) =>
      terms.every((t) => (t.field === 'sku' ? v.sku === t.value : t.field === 'id' ? String(v.id) === t.value : true)),
    );
  }

  private createSubscription(args: Record<string, unknown>) {
    const input = args.webhookSubscription as {
      uri?: string | null;
      format?: 'JSON' | 'XML' | null;
      filter?: string | null;
      includeFields?: string[] | null;
    };
    const topic = args.topic as Topic;
    if (!input.uri || !/^https?:\/\//.test(input.uri)) {
      return { webhookSubscription: null, userErrors: [{ field: ['webhookSubscription', 'uri'], message: 'Address is invalid' }] };
    }
    if ([...this.subscriptions.values()].some((s) => s.topic === topic && s.uri === input.uri)) {
      return {
        webhookSubscription: null,
        userErrors: [{ field: ['webhookSubscription', 'uri'], message: 'Address for this topic has already been taken' }],
      };
    }
    const id = this.addSubscription({ topic, uri: input.uri, viaApi: true });
    const sub = this.subscriptions.get(idOf(id, 'WebhookSubscription')!)!;
    sub.format = input.format ?? 'JSON';
    sub.filter = input.filter ?? null;
    sub.includeFields = input.includeFields ?? [];
    return { webhookSubscription: this.gqlSubscription(sub), userErrors: [] };
  }

  private setQuantities(input: SetInput, info: GraphQLResolveInfo) {
    const directive = info.fieldNodes[0]!.directives?.find((d) => d.name.value === 'idempotent');
    const keyArg = directive?.arguments?.find((a) => a.name.value === 'key')?.value;
    const key =
      keyArg?.kind === Kind.STRING
        ? keyArg.value
        : keyArg?.kind === Kind.VARIABLE
          ? (info.variableValues[keyArg.name.value] as string | undefined)
          : undefined;
    if (!key) throw new GraphQLError('The @idempotent directive is required for this mutation.', { extensions: { code: 'BAD_REQUEST' } });
    if (input.quantities.length > 250) {
      throw new GraphQLError(`The input array size of ${input.quantities.length} is greater than the maximum allowed of 250.`, {
        extensions: { code: 'MAX_INPUT_SIZE_EXCEEDED' },
      });
    }
    const fingerprint = createHash('sha256').update(JSON.stringify(input)).digest('hex');
    const previous = this.idempotency.get(key);
    if (previous) {
      if (previous.fingerprint !== fingerprint) {
        return {
          inventoryAdjustmentGroup: null,
          userErrors: [
            {
              code: 'IDEMPOTENCY_KEY_PARAMETER_MISMATCH',
              field: null,
              message: 'The same idempotency key cannot be used with different operation parameters.',
            },
          ],
        };
      }
      this.idempotentReplays++;
      return previous.result;
    }
    const result = this.applyQuantities(input, key);
    this.idempotency.set(key, { fingerprint, result });
    return result;
  }

  private applyQuantities(input: SetInput, key: string) {
    const errors: Array<{ code: string; field: string[]; message: string }> = [];
    const error = (i: number, field: string, code: string, message: string) =>
      errors.push({ code, field: ['input', 'quantities', String(i), field], message });
    if (input.name !== 'available' && input.name !== 'on_hand') {
      errors.push({
        code: 'INVALID_NAME',
        field: ['input', 'name'],
        message: "The quantity name must be either 'available' or 'on_hand'.",
      });
    }
    if (!REASONS.has(input.reason))
      errors.push({ code: 'INVALID_REASON', field: ['input', 'reason'], message: 'The specified reason is invalid.' });
    const plan = input.quantities.map((q, i) => {
      if (!('changeFromQuantity' in q)) {
        error(i, 'changeFromQuantity', 'CHANGE_FROM_QUANTITY_STALE', 'changeFromQuantity must be given (null to skip the check).');
        return null;
      }
      const itemId = idOf(q.inventoryItemId, 'InventoryItem');
      const variant = [...this.variants.values()].find((v) => v.itemId === itemId);
      if (!variant)
        return (error(i, 'inventoryItemId', 'INVALID_INVENTORY_ITEM', 'The specified inventory item could not be found.'), null);
      const locationId = idOf(q.locationId, 'Location');
      if (locationId === null || !this.locations.has(locationId))
        return (error(i, 'locationId', 'INVALID_LOCATION', 'The specified location could not be found.'), null);
      const level = variant.levels.get(locationId);
      if (!level)
        return (
          error(i, 'locationId', 'ITEM_NOT_STOCKED_AT_LOCATION', 'The specified inventory item is not stocked at the location.'),
          null
        );
      if (q.quantity < 0) return (error(i, 'quantity', 'INVALID_QUANTITY_NEGATIVE', "The quantity can't be negative."), null);
      if (q.quantity > 1_000_000_000)
        return (error(i, 'quantity', 'INVALID_QUANTITY_TOO_HIGH', "The total quantity can't be higher than 1,000,000,000."), null);
      if (q.changeFromQuantity !== null && q.changeFromQuantity !== undefined && q.changeFromQuantity !== level.available) {
        error(
          i,
          'changeFromQuantity',
          'CHANGE_FROM_QUANTITY_STALE',
          'The changeFromQuantity argument no longer matches the persisted quantity.',
        );
        return { variant, locationId, level, q, stale: true };
      }
      return { variant, locationId, level, q, stale: false };
    });
    const at = new Date();
    if (errors.length) {
      // Nothing is written when anything is refused; the refused writes are recorded as such.
      for (const p of plan) {
        if (p?.stale) {
          this.stockWrites.push({
            at,
            platform: 'shopify',
            sku: p.variant.sku,
            target: gid('InventoryItem', p.variant.itemId),
            location: gid('Location', p.locationId),
            before: p.level.available,
            after: p.q.quantity,
            applied: false,
            idempotencyKey: key,
            replayed: false,
          });
        }
      }
      return { inventoryAdjustmentGroup: null, userErrors: errors };
    }
    const changes = plan.map((p) => {
      const { variant, locationId, level, q } = p!;
      const before = level.available;
      level.available = q.quantity;
      level.updatedAt = this.now();
      this.stockWrites.push({
        at,
        platform: 'shopify',
        sku: variant.sku,
        target: gid('InventoryItem', variant.itemId),
        location: gid('Location', locationId),
        before,
        after: q.quantity,
        applied: true,
        idempotencyKey: key,
        replayed: false,
      });
      this.emitLevel(variant, locationId);
      return {
        name: input.name,
        delta: q.quantity - before,
        quantityAfterChange: null,
        item: this.gqlItem(variant),
        location: this.gqlLocation(this.locations.get(locationId)!),
        ledgerDocumentUri: null,
      };
    });
    return {
      inventoryAdjustmentGroup: {
        id: gid('InventoryAdjustmentGroup', this.next()),
        createdAt: utc(at),
        reason: input.reason,
        referenceDocumentUri: input.referenceDocumentUri ?? null,
        changes: () => changes,
      },
      userErrors: [],
    };
  }

  // ---- GraphQL shapes ---------------------------------------------------------------------------

  private gqlOrder(o: Order) {
    const refunded = fromCents(sumCents(o.refunds.map((r) => r.amount)));
    const total = this.total(o);
    return {
      id: gid('Order', o.id),
      legacyResourceId: String(o.id),
      name: `#${o.number}`,
      email: o.email,
      createdAt: utc(o.createdAt),
      updatedAt: utc(o.updatedAt),
      processedAt: utc(o.createdAt),
      cancelledAt: o.cancelledAt ? utc(o.cancelledAt) : null,
      cancelReason: o.cancelledAt ? 'CUSTOMER' : null,
      closed: false,
      test: false,
      taxesIncluded: true,
      currencyCode: 'USD',
      displayFinancialStatus: o.financial.toUpperCase(),
      subtotalPriceSet: money(fromCents(sumCents(o.lines.map((l) => fromCents(toCents(l.price) * l.quantity))))),
      totalPriceSet: money(total),
      currentTotalPriceSet: money(fromCents(toCents(total) - toCents(refunded))),
      totalTaxSet: money('0.00'),
      totalDiscountsSet: money('0.00'),
      totalShippingPriceSet: money(o.shipping?.price ?? '0.00'),
      totalRefundedSet: money(refunded),
      paymentGatewayNames: ['manual'],
      lineItems: (args: { first?: number; after?: string }) =>
        this.mapConnection(
          connection(o.lines, (l) => [l.id], args),
          (l) => this.gqlLine(o, l),
        ),
      shippingLines: (args: { first?: number; after?: string }) =>
        this.mapConnection(
          connection(o.shipping ? [o.shipping] : [], (s) => [s.id], args),
          (s) => ({
            id: gid('ShippingLine', s.id),
            title: 'Standard',
            code: 'Standard',
            originalPriceSet: money(s.price),
            discountedPriceSet: money(s.price),
            // Prices include tax and the simulator takes no discount codes.
            discountAllocations: [],
            taxLines: [],
          }),
        ),
      refunds: (args: { first?: number }) =>
        o.refunds.slice(0, args.first ?? o.refunds.length).map((r) => ({
          id: gid('Refund', r.id),
          legacyResourceId: String(r.id),
          createdAt: utc(r.createdAt),
          updatedAt: utc(r.createdAt),
          note: r.note,
          totalRefundedSet: money(r.amount),
          refundLineItems: (a: { first?: number; after?: string }) =>
            this.mapConnection(
              connection(r.lines, (l) => [l.id], a),
              (l) => ({
                id: gid('RefundLineItem', l.id),
                lineItem: this.gqlLine(o, l.line),
                quantity: l.quantity,
                restockType: l.restockType.toUpperCase(),
                restocked: l.restockType !== 'no_restock',
                priceSet: money(l.line.price),
                subtotalSet: money(l.subtotal),
                totalTaxSet: money('0.00'),
                location:
                  l.restockType !== 'no_restock' ? this.gqlLocation(this.locations.get(idOf(this.primaryLocation, 'Location')!)!) : null,
              }),
            ),
        })),
    };
  }

  private gqlLine(o: Order, l: Line) {
    const refunded = o.refunds
      .flatMap((r) => r.lines)
      .filter((x) => x.line === l)
      .reduce((s, x) => s + x.quantity, 0);
    return {
      id: gid('LineItem', l.id),
      name: l.title,
      title: l.title,
      sku: l.sku,
      quantity: l.quantity,
      currentQuantity: l.quantity - refunded,
      refundableQuantity: l.quantity - refunded,
      originalUnitPriceSet: money(l.price),
      discountedUnitPriceSet: money(l.price),
      originalTotalSet: money(fromCents(toCents(l.price) * l.quantity)),
      discountAllocations: [],
      taxLines: [],
      variant: l.variant ? this.gqlVariant(l.variant) : null,
      product: l.variant
        ? { id: gid('Product', l.variant.productId), legacyResourceId: String(l.variant.productId), title: l.variant.title }
        : null,
    };
  }

  private gqlVariant(v: Variant): Record<string, unknown> {
    return {
      id: gid('ProductVariant', v.id),
      legacyResourceId: String(v.id),
      sku: v.sku,
      title: 'Default Title',
      displayName: `${v.title} - Default Title`,
      price: v.price,
      inventoryQuantity: [...v.levels.values()].reduce((s, l) => s + l.available, 0),
      inventoryItem: () => this.gqlItem(v),
      product: { id: gid('Product', v.productId), legacyResourceId: String(v.productId), title: v.title },
    };
  }

  private gqlItem(v: Variant): Record<string, unknown> {
    const level = (locationId: number) => {
      const l = v.levels.get(locationId);
      if (!l) return null;
      return {
        id: `gid://shopify/InventoryLevel/${v.itemId}?inventory_item_id=${v.itemId}&location_id=${locationId}`,
        item: () => this.gqlItem(v),
        location: this.gqlLocation(this.locations.get(locationId)!),
        updatedAt: utc(l.updatedAt),
        quantities: ({ names }: { names: string[] }) =>
          names.map((name) => ({
            id: `gid://shopify/InventoryQuantity/${v.itemId}?location_id=${locationId}&name=${name}`,
            name,
            // No committed or reserved units here: on hand equals available.
            quantity: ['available', 'on_hand'].includes(name) ? l.available : 0,
            updatedAt: utc(l.updatedAt),
          })),
      };
    };
    return {
      id: gid('InventoryItem', v.itemId),
      legacyResourceId: String(v.itemId),
      sku: v.sku,
      tracked: true,
      variant: () => this.gqlVariant(v),
      inventoryLevel: ({ locationId }: { locationId: string }) => level(idOf(locationId, 'Location') ?? -1),
      inventoryLevels: (args: { first?: number; after?: string }) =>
        this.mapConnection(
          connection([...v.levels.keys()], (id) => [id], args),
          (id) => level(id),
        ),
    };
  }

  private gqlLocation(l: Location) {
    return { id: gid('Location', l.id), legacyResourceId: String(l.id), name: l.name, isActive: l.active, fulfillsOnlineOrders: true };
  }

  private gqlSubscription(s: ShopifySubscription) {
    return {
      id: gid('WebhookSubscription', s.id),
      legacyResourceId: String(s.id),
      topic: s.topic,
      uri: s.uri,
      format: s.format,
      filter: s.filter,
      includeFields: s.includeFields,
      apiVersion: { handle: this.apiVersion, displayName: this.apiVersion, supported: true },
      createdAt: utc(s.createdAt),
      updatedAt: utc(s.updatedAt),
    };
  }

  // ---- REST shapes (webhook bodies) -------------------------------------------------------------

  private total(o: Order): string {
    return fromCents(sumCents([...o.lines.map((l) => fromCents(toCents(l.price) * l.quantity)), o.shipping?.price ?? '0.00']));
  }

  /** The order webhook body: the published `orders/*` sample's shape, by the webhook-ingest factory. */
  private restOrder(o: Order): Record<string, unknown> {
    const base = JSON.parse(
      shopifyOrderBody({
        id: String(o.id),
        financial_status: o.financial,
        cancelled_at: o.cancelledAt ? restTime(o.cancelledAt) : null,
        updated_at: restTime(o.updatedAt),
        email: o.email,
        line_items: o.lines.map((l) => ({
          id: String(l.id),
          product_id: String(l.variant?.productId ?? 0),
          variant_id: String(l.variant?.id ?? 0),
          sku: l.sku,
          title: l.title,
          quantity: l.quantity,
          price: l.price,
        })),
      }),
    ) as Record<string, unknown>;
    const total = this.total(o);
    const refunded = sumCents(o.refunds.map((r) => r.amount));
    const current = fromCents(toCents(total) - refunded);
    return {
      ...base,
      name: `#${o.number}`,
      number: o.number - 1000,
      order_number: o.number,
      created_at: restTime(o.createdAt),
      processed_at: restTime(o.createdAt),
      total_price: total,
      current_total_price: current,
      total_outstanding: o.financial === 'pending' ? total : '0.00',
      total_shipping_price_set: moneySet(o.shipping?.price ?? '0.00'),
      shipping_lines: o.shipping
        ? [
            {
              id: o.shipping.id,
              carrier_identifier: null,
              code: 'Standard',
              discounted_price: o.shipping.price,
              discounted_price_set: moneySet(o.shipping.price),
              is_removed: false,
              phone: null,
              price: o.shipping.price,
              price_set: moneySet(o.shipping.price),
              requested_fulfillment_service_id: null,
              source: 'shopify',
              title: 'Standard',
              tax_lines: [],
              discount_allocations: [],
            },
          ]
        : [],
      refunds: o.refunds.map((r) => this.restRefund(o, r)),
    };
  }

  /** The refund body (`refunds/create` sample of the webhook reference). */
  private restRefund(o: Order, r: Refund): Record<string, unknown> {
    return {
      id: r.id,
      order_id: o.id,
      created_at: restTime(r.createdAt),
      note: r.note,
      user_id: null,
      processed_at: restTime(r.createdAt),
      duties: [],
      total_duties_set: moneySet('0.00'),
      return: null,
      refund_shipping_lines: [],
      restock: r.lines.some((l) => l.restockType !== 'no_restock'),
      admin_graphql_api_id: gid('Refund', r.id),
      order_adjustments: [],
      refund_line_items: r.lines.map((l) => ({
        id: l.id,
        quantity: l.quantity,
        line_item_id: l.line.id,
        location_id: l.restockType === 'no_restock' ? null : idOf(this.primaryLocation, 'Location'),
        restock_type: l.restockType,
        subtotal: Number(l.subtotal),
        total_tax: 0,
        subtotal_set: moneySet(l.subtotal),
        total_tax_set: moneySet('0.00'),
        line_item: {
          id: l.line.id,
          variant_id: l.line.variant?.id ?? null,
          title: l.line.title,
          quantity: l.line.quantity,
          sku: l.line.sku,
          price: l.line.price,
          product_id: l.line.variant?.productId ?? null,
          admin_graphql_api_id: gid('LineItem', l.line.id),
        },
      })),
      transactions: [
        {
          id: r.transactionId,
          order_id: o.id,
          kind: 'refund',
          gateway: 'manual',
          status: 'success',
          message: 'Refunded',
          created_at: restTime(r.createdAt),
          test: false,
          authorization: null,
          location_id: null,
          user_id: null,
          parent_id: null,
          processed_at: restTime(r.createdAt),
          device_id: null,
          error_code: null,
          source_name: 'web',
          receipt: {},
          amount: r.amount,
          currency: 'USD',
          payment_id: `#${o.number}.${o.refunds.indexOf(r) + 1}`,
          manual_payment_gateway: true,
          amount_rounding: null,
          admin_graphql_api_id: gid('OrderTransaction', r.transactionId),
        },
      ],
    };
  }

  // ---- webhooks out ----------------------------------------------------------------------------

  private emitOrder(o: Order, topics: Topic[]): void {
    const body = JSON.stringify(this.restOrder(o));
    for (const topic of topics) this.emit(topic, body, o.updatedAt);
  }

  /** `inventory_levels/update` (the REST InventoryLevel shape), sent for every change, the shop's own writes included. */
  private emitLevel(v: Variant, locationId: number): void {
    const level = v.levels.get(locationId)!;
    const body = JSON.stringify({
      inventory_item_id: v.itemId,
      location_id: locationId,
      available: level.available,
      updated_at: restTime(level.updatedAt),
      admin_graphql_api_id: `gid://shopify/InventoryLevel/${v.itemId}?inventory_item_id=${v.itemId}&location_id=${locationId}`,
    });
    this.emit('INVENTORY_LEVELS_UPDATE', body, level.updatedAt);
  }

  private emit(topic: Topic, body: string, at: Date): void {
    const eventId = randomUUID();
    for (const sub of this.subscriptions.values()) {
      if (sub.topic !== topic) continue;
      const webhookId = randomUUID();
      const headers = {
        ...shopifyHeaders(body, TOPIC_HEADER[topic], this.apiSecret, eventId),
        'X-Shopify-Shop-Domain': this.shopDomain,
        'X-Shopify-API-Version': this.apiVersion,
        'X-Shopify-Webhook-Id': webhookId,
        'X-Shopify-Triggered-At': at.toISOString(),
      };
      this.sender.send({ subscriptionId: String(sub.id), topic: TOPIC_HEADER[topic], url: sub.uri, eventId, body, headers: () => headers });
    }
  }

  /** Shopify retries a failed delivery on its schedule; when the retries are spent, a subscription made through the API is deleted. */
  protected afterDelivery(out: Outgoing, attempt: DeliveryAttempt): number | null {
    if (attempt.status !== null && attempt.status >= 200 && attempt.status < 300) return null;
    const sub = this.subscriptions.get(Number(out.subscriptionId));
    if (!sub) return null;
    if (attempt.attempt < this.retrySchedule.length) return this.retrySchedule[attempt.attempt]!;
    if (sub.viaApi) this.subscriptions.delete(sub.id);
    return null;
  }

  // ---- helpers --------------------------------------------------------------------------------

  private moveStock(v: Variant | null, delta: number): void {
    if (!v) return;
    const locationId = idOf(this.primaryLocation, 'Location')!;
    const level = v.levels.get(locationId);
    if (!level) return;
    level.available += delta;
    level.updatedAt = this.now();
    this.emitLevel(v, locationId);
  }

  private order(id: number | string): Order {
    const n = typeof id === 'number' ? id : (idOf(id, 'Order') ?? Number(id));
    const order = this.orders.get(n);
    if (!order) throw new Error(`No order ${id}`);
    return order;
  }

  private bySku(sku: string): Variant | undefined {
    for (const v of this.variants.values()) if (v.sku === sku) return v;
    return undefined;
  }

  private next(): number {
    return ++this.seq;
  }
}

interface SetInput {
  name: string;
  reason: string;
  referenceDocumentUri?: string | null;
  quantities: Array<{ inventoryItemId: string; locationId: string; quantity: number; changeFromQuantity?: number | null }>;
}
