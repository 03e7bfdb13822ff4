import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAdminApiClient, type ClientResponse } from '@shopify/admin-api-client';
import { platformOrderReference } from '@erp/contracts';
import { chunks } from '../../domain/chunks';
import {
  BATCH_LIMITS,
  MORE_LINES,
  ONE_ORDER_LIMITS,
  orderSelection,
  restShapedOrder,
  truncated,
  type GraphqlOrder,
  type OrderLimits,
} from '../../domain/shopify-order';
import {
  ShopCallError,
  verdictFor,
  withRetries,
  type CallPolicy,
  type PedidoStamp,
  type TiendaApi,
  type PedidoTienda,
  type ShopProductRef,
  type StockWriteItem,
  type StockWriteResult,
  type SubscriptionCheck,
} from './shop';

/*
 * Shopify's GraphQL Admin API at a pinned version (https://shopify.dev/docs/api/admin-graphql/2026-04),
 * through Shopify's own client: orders by `updated_at` and cursor (`orders(query: "updated_at:>=…",
 * sortKey: UPDATED_AT)`), webhook subscriptions (`webhookSubscriptions`, `webhookSubscriptionCreate`).
 * The cost bucket is obeyed from each answer's `extensions.cost.throttleStatus`: a query waits
 * until the bucket holds what the previous one of its kind cost, and `THROTTLED` waits what is
 * missing at the restore rate; `429` waits its `Retry-After`.
 */
export const SHOPIFY_API_VERSION = '2026-04';
export const SHOPIFY_ORDER_TOPICS = ['ORDERS_CREATE', 'ORDERS_UPDATED', 'REFUNDS_CREATE'] as const;
/** The listing reads only which orders changed (250 a page, 252 points); those we lack are then read whole. */
const STAMPS_PER_PAGE = 250;
export const ORDERS_PER_READ = 3;

export const STAMPS = /* GraphQL */ `
  query ReconcileStamps($query: String!, $after: String) {
    orders(first: ${STAMPS_PER_PAGE}, after: $after, query: $query, sortKey: UPDATED_AT) {
      pageInfo { hasNextPage endCursor }
      nodes { legacyResourceId updatedAt cancelledAt displayFinancialStatus }
    }
  }
`;

/** Orders read whole by id, `count` of them aliased `o0`, `o1`… in one query. */
export function ordersById(count: number, limits: OrderLimits): string {
  const vars = Array.from({ length: count }, (_, i) => `$id${i}: ID!`).join(', ');
  const fields = Array.from({ length: count }, (_, i) => `o${i}: order(id: $id${i}) { ${orderSelection(limits)} }`).join('\n');
  return `query ReconcileOrders(${vars}) {\n${fields}\n}`;
}

const SUBSCRIPTIONS = /* GraphQL */ `
  query OurSubscriptions($uri: String!, $after: String) {
    webhookSubscriptions(first: 50, after: $after, uri: $uri) {
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        topic
        uri
      }
    }
  }
`;
const CREATE_SUBSCRIPTION = /* GraphQL */ `
  mutation Subscribe($topic: WebhookSubscriptionTopic!, $uri: String!) {
    webhookSubscriptionCreate(topic: $topic, webhookSubscription: { uri: $uri, format: JSON }) {
      userErrors {
        field
        message
      }
    }
  }
`;

const LOCATIONS = /* GraphQL */ `
  query Locations {
    locations(first: 50) {
      nodes {
        id
        isActive
      }
    }
  }
`;
const SET_QUANTITIES = /* GraphQL */ `
  mutation SetStock($input: InventorySetQuantitiesInput!, $key: String!) {
    inventorySetQuantities(input: $input) @idempotent(key: $key) {
      inventoryAdjustmentGroup {
        id
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`;
export const VARIANT_STOCK = /* GraphQL */ `
  query VariantStock($loc: ID!, $after: String) {
    productVariants(first: 100, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        sku
        inventoryItem {
          id
          inventoryLevel(locationId: $loc) {
            quantities(names: ["available"]) {
              quantity
            }
          }
        }
      }
    }
  }
`;
/** SKUs resolved per query (aliased `productVariants` searches) and quantities read per query. */
const SKUS_PER_QUERY = 25;
const LEVELS_PER_QUERY = 50;
/** `inventorySetQuantities` takes at most 250 quantities. */
const QUANTITIES_PER_WRITE = 250;

/** GraphQL string literal of a SKU inside Shopify's search syntax: `sku:"A-1"`. */
const skuSearch = (sku: string) => JSON.stringify(`sku:${JSON.stringify(sku)}`);

interface Throttle {
  available: number;
  restoreRate: number;
  at: number;
}

export function shopifyShop(shop: { url: string; token: string }, policy: CallPolicy): TiendaApi {
  const client = createAdminApiClient({
    storeDomain: shop.url,
    apiVersion: SHOPIFY_API_VERSION,
    accessToken: shop.token,
    customFetchApi: (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(policy.timeoutMs) }),
  });
  let throttle: Throttle | null = null;
  const lastCost = new Map<string, number>();

  /** Waits until the bucket should hold `cost` points, from the last status the shop gave. */
  const waitForBucket = async (cost: number) => {
    if (!throttle || throttle.restoreRate <= 0) return;
    const now = throttle.available + ((Date.now() - throttle.at) / 1000) * throttle.restoreRate;
    if (now < cost) await sleep(Math.ceil(((cost - now) / throttle.restoreRate) * 1000));
  };

  const request = <T>(what: string, query: string, variables: Record<string, unknown>): Promise<T> =>
    withRetries(
      policy,
      async () => {
        await waitForBucket(lastCost.get(query) ?? 0);
        let answer: ClientResponse<T>;
        try {
          answer = await client.request<T>(query, { variables });
        } catch (err) {
          throw new ShopCallError(`Shopify ${what}: ${(err as Error).message}`, null);
        }
        const cost = answer.extensions?.cost;
        const status = cost?.throttleStatus;
        if (status?.currentlyAvailable !== undefined && status.restoreRate !== undefined) {
          throttle = { available: status.currentlyAvailable, restoreRate: status.restoreRate, at: Date.now() };
        }
        if (cost?.requestedQueryCost !== undefined) lastCost.set(query, cost.requestedQueryCost);
        const errors = answer.errors;
        if (errors) {
          const throttled = errors.graphQLErrors?.some((e) => e.extensions?.code === 'THROTTLED');
          const http = throttled ? 429 : (errors.networkStatusCode ?? null);
          const message = errors.graphQLErrors?.map((e) => e.message).join('; ') || errors.message || 'error';
          throw Object.assign(new ShopCallError(`Shopify ${what}: ${message}`, http), {
            retryAfter: errors.response?.headers.get('retry-after'),
            throttled,
          });
        }
        return answer.data as T;
      },
      (err, attempt) => {
        const e = err as ShopCallError & { retryAfter?: string | null; throttled?: boolean };
        if (e.throttled) {
          // What is missing of the query's cost, at the restore rate.
          const missing = Math.max(0, (lastCost.get(query) ?? 50) - (throttle?.available ?? 0));
          return { retry: true, waitMs: Math.ceil((missing / Math.max(1, throttle?.restoreRate ?? 50)) * 1000) + 50 };
        }
        return verdictFor(e.status, e.retryAfter, attempt, policy);
      },
    );

  const toShopOrder = (o: GraphqlOrder): PedidoTienda => ({
    referencia: platformOrderReference('shopify', o.legacyResourceId),
    version: new Date(o.updatedAt),
    cuerpo: Buffer.from(JSON.stringify(restShapedOrder(o))),
    tema: 'orders/updated',
  });

  const byId = (ids: string[], limits: OrderLimits) =>
    request<Record<string, GraphqlOrder | null>>(
      'order',
      ordersById(ids.length, limits),
      Object.fromEntries(ids.map((id, i) => [`id${i}`, `gid://shopify/Order/${id}`])),
    );

  /** The order with every line: the pages after the first read, appended. */
  const withAllLines = async (id: string, order: GraphqlOrder): Promise<GraphqlOrder> => {
    const nodes = [...order.lineItems.nodes];
    let page = order.lineItems.pageInfo;
    while (page.hasNextPage && page.endCursor) {
      const more = await request<{ order: { lineItems: GraphqlOrder['lineItems'] } | null }>('order', MORE_LINES, {
        id: `gid://shopify/Order/${id}`,
        after: page.endCursor,
      });
      if (!more.order) break;
      nodes.push(...more.order.lineItems.nodes);
      page = more.order.lineItems.pageInfo;
    }
    return { ...order, lineItems: { pageInfo: { hasNextPage: false }, nodes } };
  };

  /** Orders by id, whole: a batched read, then alone each one the batch did not hold whole. */
  const readOrders = async (ids: string[]): Promise<PedidoTienda[]> => {
    const batch = await byId(ids, BATCH_LIMITS);
    const out: PedidoTienda[] = [];
    for (const [i, id] of ids.entries()) {
      let order = batch[`o${i}`] ?? null;
      if (order && truncated(order, BATCH_LIMITS)) {
        order = (await byId([id], ONE_ORDER_LIMITS)).o0 ?? null;
        if (order && truncated(order, ONE_ORDER_LIMITS, true)) {
          throw new ShopCallError(`Shopify: el pedido ${id} tiene más envíos o reembolsos de los que se leen de una vez`, null);
        }
        if (order) order = await withAllLines(id, order);
      }
      // An order deleted since the listing has nothing left to reconcile.
      if (order) out.push(toShopOrder(order));
    }
    return out;
  };

  let location: string | null = null;
  /** The integration's location, or the shop's only active one. */
  const locationOf = async (ubicacion: string | null): Promise<string> => {
    if (ubicacion) return ubicacion;
    if (location) return location;
    const data = await request<{ locations: { nodes: Array<{ id: string; isActive: boolean }> } }>('locations', LOCATIONS, {});
    const active = data.locations.nodes.filter((l) => l.isActive);
    if (active.length !== 1) {
      throw new ShopCallError(
        `Shopify: la tienda tiene ${active.length} ubicaciones activas; indique en la integración cuál (tienda.ubicacion)`,
        null,
      );
    }
    return (location = active[0]!.id);
  };

  /** The `available` quantity of inventory items at a location, by item GID (null: not stocked there). */
  const levels = async (items: readonly string[], at: string): Promise<Map<string, number | null>> => {
    const out = new Map<string, number | null>();
    for (const part of chunks(items, LEVELS_PER_QUERY)) {
      const vars = part.map((_, i) => `$i${i}: ID!`).join(', ');
      const fields = part
        .map(
          (_, i) =>
            `i${i}: inventoryItem(id: $i${i}) { inventoryLevel(locationId: $loc) { quantities(names: ["available"]) { quantity } } }`,
        )
        .join('\n');
      const data = await request<Record<string, { inventoryLevel: { quantities: Array<{ quantity: number }> } | null } | null>>(
        'inventoryItem',
        `query Levels($loc: ID!, ${vars}) {\n${fields}\n}`,
        { loc: at, ...Object.fromEntries(part.map((id, i) => [`i${i}`, id])) },
      );
      part.forEach((id, i) => out.set(id, data[`i${i}`]?.inventoryLevel?.quantities[0]?.quantity ?? null));
    }
    return out;
  };

  type SetAnswer = { inventorySetQuantities: { userErrors: Array<{ code: string | null; field: string[] | null; message: string }> } };
  /** One compare-and-set write of up to 250 quantities; the indexes of the stale ones when it was refused for them alone. */
  const write = async (items: readonly StockWriteItem[], at: string): Promise<{ stale: number[]; refused: string | null }> => {
    const input = {
      name: 'available',
      reason: 'correction',
      referenceDocumentUri: 'erp://stock',
      quantities: items.map((i) => ({
        inventoryItemId: i.ref.id_externo,
        locationId: at,
        quantity: i.cantidad,
        changeFromQuantity: i.leido,
      })),
    };
    // The same write repeated (a retry after a lost answer) is the same key: Shopify applies it once.
    const key = createHash('sha256').update(JSON.stringify(input)).digest('hex');
    const data = await request<SetAnswer>('inventorySetQuantities', SET_QUANTITIES, { input, key });
    const errors = data.inventorySetQuantities.userErrors;
    if (errors.length === 0) return { stale: [], refused: null };
    const stale = errors.filter((e) => e.code === 'CHANGE_FROM_QUANTITY_STALE').map((e) => Number(e.field?.[2]));
    if (stale.length === errors.length) return { stale, refused: null };
    return { stale: [], refused: errors.map((e) => `${e.code ?? ''} ${e.message}`.trim()).join('; ') };
  };

  return {
    plataforma: 'shopify',
    async findProductos(codigos) {
      const found = new Map<string, ShopProductRef | null>(codigos.map((c) => [c, null]));
      for (const part of chunks(codigos, SKUS_PER_QUERY)) {
        const fields = part
          .map((sku, i) => `v${i}: productVariants(first: 2, query: ${skuSearch(sku)}) { nodes { sku inventoryItem { id } } }`)
          .join('\n');
        const data = await request<Record<string, { nodes: Array<{ sku: string | null; inventoryItem: { id: string } }> }>>(
          'productVariants',
          `query Variants {\n${fields}\n}`,
          {},
        );
        part.forEach((sku, i) => {
          const match = data[`v${i}`]?.nodes.find((n) => n.sku === sku);
          if (match) found.set(sku, { id_externo: match.inventoryItem.id, id_padre: null });
        });
      }
      return found;
    },
    async setStock(items, ubicacion): Promise<StockWriteResult> {
      const at = await locationOf(ubicacion);
      const result: StockWriteResult = { written: [], failed: [], reread: 0 };
      for (const part of chunks(items, QUANTITIES_PER_WRITE)) {
        // Compare-and-set on what we last read or wrote; what we never read is read first.
        const unknown = part.filter((i) => i.leido === null).map((i) => i.ref.id_externo);
        const read = unknown.length > 0 ? await levels(unknown, at) : new Map<string, number | null>();
        let batch = part.map((i) => (i.leido === null ? { ...i, leido: read.get(i.ref.id_externo) ?? 0 } : i));
        let answer = await write(batch, at);
        if (answer.stale.length > 0) {
          // The shop's quantity moved (an order, a change in its admin): read again once, write again.
          result.reread += answer.stale.length;
          const now = await levels(
            answer.stale.map((i) => batch[i]!.ref.id_externo),
            at,
          );
          batch = batch.map((i) => (now.has(i.ref.id_externo) ? { ...i, leido: now.get(i.ref.id_externo) ?? 0 } : i));
          answer = await write(batch, at);
        }
        if (answer.refused !== null || answer.stale.length > 0) {
          const error = answer.refused ?? 'La cantidad de la tienda cambió otra vez durante la escritura';
          for (const i of batch) result.failed.push({ codigo: i.codigo, error });
        } else for (const i of batch) result.written.push({ codigo: i.codigo, cantidad: i.cantidad });
      }
      return result;
    },
    async listStock(ubicacion) {
      const at = await locationOf(ubicacion);
      const out = new Map<string, { ref: ShopProductRef; cantidad: number | null }>();
      let after: string | null = null;
      for (;;) {
        const data: {
          productVariants: {
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
            nodes: Array<{
              sku: string | null;
              inventoryItem: { id: string; inventoryLevel: { quantities: Array<{ quantity: number }> } | null };
            }>;
          };
        } = await request('productVariants', VARIANT_STOCK, { loc: at, after });
        for (const v of data.productVariants.nodes) {
          if (!v.sku) continue;
          out.set(v.sku, {
            ref: { id_externo: v.inventoryItem.id, id_padre: null },
            cantidad: v.inventoryItem.inventoryLevel?.quantities[0]?.quantity ?? null,
          });
        }
        if (!data.productVariants.pageInfo.hasNextPage) return out;
        after = data.productVariants.pageInfo.endCursor;
      }
    },
    async pedidosChangedSince(since, pages) {
      const query = `updated_at:>='${since.toISOString()}'`;
      let listed = 0;
      let after: string | null = null;
      for (;;) {
        const data: {
          orders: {
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
            nodes: Array<{
              legacyResourceId: string;
              updatedAt: string;
              cancelledAt: string | null;
              displayFinancialStatus: string | null;
            }>;
          };
        } = await request('orders', STAMPS, { query, after });
        const stamps: PedidoStamp[] = data.orders.nodes.map((n) => ({
          referencia: platformOrderReference('shopify', n.legacyResourceId),
          version: new Date(n.updatedAt),
          // As the order's intake records it: `cancelled` first, else the financial status.
          estado: n.cancelledAt ? 'cancelled' : (n.displayFinancialStatus?.toLowerCase() ?? ''),
        }));
        listed += stamps.length;
        const wanted = stamps.length > 0 ? await pages.wanted(stamps) : new Set<string>();
        const ids = data.orders.nodes.filter((n, i) => wanted.has(stamps[i]!.referencia)).map((n) => n.legacyResourceId);
        for (let i = 0; i < ids.length; i += ORDERS_PER_READ) {
          const orders = await readOrders(ids.slice(i, i + ORDERS_PER_READ));
          if (orders.length > 0) await pages.onPage(orders);
        }
        if (!data.orders.pageInfo.hasNextPage) return listed;
        after = data.orders.pageInfo.endCursor;
      }
    },
    async keepSubscriptions(endpoint): Promise<SubscriptionCheck> {
      const topics = new Set<string>();
      let after: string | null = null;
      for (;;) {
        const data: {
          webhookSubscriptions: {
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
            nodes: Array<{ topic: string; uri: string }>;
          };
        } = await request('webhookSubscriptions', SUBSCRIPTIONS, { uri: endpoint, after });
        for (const s of data.webhookSubscriptions.nodes) if (s.uri === endpoint) topics.add(s.topic);
        if (!data.webhookSubscriptions.pageInfo.hasNextPage) break;
        after = data.webhookSubscriptions.pageInfo.endCursor;
      }
      let restored = false;
      for (const topic of SHOPIFY_ORDER_TOPICS) {
        if (topics.has(topic)) continue;
        const made = await request<{ webhookSubscriptionCreate: { userErrors: Array<{ message: string }> } }>(
          'webhookSubscriptionCreate',
          CREATE_SUBSCRIPTION,
          { topic, uri: endpoint },
        );
        const refused = made.webhookSubscriptionCreate.userErrors;
        if (refused.length > 0)
          throw new ShopCallError(`Shopify webhookSubscriptionCreate ${topic}: ${refused.map((e) => e.message).join('; ')}`, 422);
        restored = true;
      }
      return restored ? 'restaurada' : 'activa';
    },
  };
}
