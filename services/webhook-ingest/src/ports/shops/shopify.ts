import { setTimeout as sleep } from 'node:timers/promises';
import { createAdminApiClient, type ClientResponse } from '@shopify/admin-api-client';
import { platformOrderReference } from '@erp/contracts';
import {
  BATCH_LIMITS,
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
  type OrderStamp,
  type ShopApi,
  type ShopOrder,
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
const ORDERS_PER_READ = 3;

const STAMPS = /* GraphQL */ `
  query ReconcileStamps($query: String!, $after: String) {
    orders(first: ${STAMPS_PER_PAGE}, after: $after, query: $query, sortKey: UPDATED_AT) {
      pageInfo { hasNextPage endCursor }
      nodes { legacyResourceId updatedAt }
    }
  }
`;

/** Orders read whole by id, `count` of them aliased `o0`, `o1`… in one query. */
function ordersById(count: number, limits: OrderLimits): string {
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

interface Throttle {
  available: number;
  restoreRate: number;
  at: number;
}

export function shopifyShop(shop: { url: string; token: string }, policy: CallPolicy): ShopApi {
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

  const toShopOrder = (o: GraphqlOrder): ShopOrder => ({
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

  /** Orders by id, whole: a batched read, then alone each one the batch did not hold whole. */
  const readOrders = async (ids: string[]): Promise<ShopOrder[]> => {
    const batch = await byId(ids, BATCH_LIMITS);
    const out: ShopOrder[] = [];
    for (const [i, id] of ids.entries()) {
      let order = batch[`o${i}`] ?? null;
      if (order && truncated(order, BATCH_LIMITS)) {
        order = (await byId([id], ONE_ORDER_LIMITS)).o0 ?? null;
        if (order && truncated(order, ONE_ORDER_LIMITS)) {
          throw new ShopCallError(`Shopify: el pedido ${id} tiene más líneas o reembolsos de los que se leen de una vez`, null);
        }
      }
      // An order deleted since the listing has nothing left to reconcile.
      if (order) out.push(toShopOrder(order));
    }
    return out;
  };

  return {
    plataforma: 'shopify',
    async ordersChangedSince(since, pages) {
      const query = `updated_at:>='${since.toISOString()}'`;
      let listed = 0;
      let after: string | null = null;
      for (;;) {
        const data: {
          orders: {
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
            nodes: Array<{ legacyResourceId: string; updatedAt: string }>;
          };
        } = await request('orders', STAMPS, { query, after });
        const stamps: OrderStamp[] = data.orders.nodes.map((n) => ({
          referencia: platformOrderReference('shopify', n.legacyResourceId),
          version: new Date(n.updatedAt),
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
