import { createAdminApiClient, type AdminApiClient } from '@shopify/admin-api-client';
import { classify } from '../../../services/webhook-ingest/src/domain/classify';
import { planPedidoVenta, shopifyPedidoIntent, shopifyReembolsoIntent } from '../../../services/webhook-ingest/src/domain/pedidos';
import { verifySignature } from '../../../services/webhook-ingest/src/domain/signature';
import { caFetch } from './https';
import { webhookReceiver } from './receiver';
import { ShopifyShop, type ShopifyOptions } from './shopify';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Shopify's own client, over HTTPS trusting only the test CA. */
const clientOf = (shop: ShopifyShop, accessToken = shop.accessToken): AdminApiClient =>
  createAdminApiClient({ storeDomain: shop.url, apiVersion: shop.apiVersion, accessToken, customFetchApi: caFetch() });

const ORDERS = /* GraphQL */ `
  query Orders($after: String, $query: String) {
    orders(first: 10, after: $after, query: $query, sortKey: UPDATED_AT) {
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        name
        updatedAt
        cancelledAt
        displayFinancialStatus
        totalPriceSet {
          shopMoney {
            amount
          }
        }
        lineItems(first: 5) {
          nodes {
            id
            sku
            quantity
          }
        }
        refunds(first: 5) {
          id
          totalRefundedSet {
            shopMoney {
              amount
            }
          }
          refundLineItems(first: 5) {
            nodes {
              quantity
              restockType
              lineItem {
                id
                sku
              }
            }
          }
        }
      }
    }
  }
`;

const SET = /* GraphQL */ `
  mutation Set($input: InventorySetQuantitiesInput!, $key: String!) {
    inventorySetQuantities(input: $input) @idempotent(key: $key) {
      inventoryAdjustmentGroup {
        reason
        changes {
          name
          delta
        }
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`;

describe('Shopify shop simulator', () => {
  let shop: ShopifyShop;
  let client: AdminApiClient;
  const start = async (options: ShopifyOptions = {}) => {
    shop = await ShopifyShop.start(options);
    client = clientOf(shop);
  };
  afterEach(() => shop.close());

  it('refuses a wrong access token and serves only the pinned version', async () => {
    await start();
    const wrong = await clientOf(shop, 'shpat_wrong').request('{ shop { name } }');
    expect(wrong.errors?.networkStatusCode).toBe(401);
    const res = await caFetch()(`${shop.url}/admin/api/2024-01/graphql.json`, {
      method: 'POST',
      headers: { 'X-Shopify-Access-Token': shop.accessToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '{ shop { name } }' }),
    });
    expect(res.status).toBe(404);
    const ok = await client.request('{ shop { myshopifyDomain } }');
    expect(ok.data).toEqual({ shop: { myshopifyDomain: shop.shopDomain } });
    expect(shop.metrics.unauthorized).toBe(1);
  });

  it('pages orders updated since a time by cursor, oldest change first, with their refunds', async () => {
    await start();
    const since = new Date(Date.now() - 1000).toISOString();
    const created = Array.from({ length: 23 }, (_, i) =>
      shop.createOrder({ lines: [{ sku: `SKU-${i % 4}`, quantity: 2, price: '3.35' }] }),
    );
    shop.advanceClock(2000);
    shop.refundOrder(created[0]!.id as number, { lines: [{ sku: 'SKU-0', quantity: 1 }] });
    const seen: Json[] = [];
    let after: string | null = null;
    do {
      const { data, errors, extensions }: { data?: Json; errors?: unknown; extensions?: Json } = await client.request<Json>(ORDERS, {
        variables: { after, query: `updated_at:>='${since}'` },
      });
      expect(errors).toBeUndefined();
      expect(extensions?.cost).toMatchObject({
        requestedQueryCost: expect.any(Number),
        throttleStatus: { maximumAvailable: 2000, restoreRate: 100 },
      });
      seen.push(...(data!.orders.nodes as Json[]));
      after = data!.orders.pageInfo.hasNextPage ? (data!.orders.pageInfo.endCursor as string) : null;
    } while (after);
    expect(shop.metrics.orderPages).toBe(3);
    expect(seen.map((o) => o.id)).toHaveLength(23);
    expect(new Set(seen.map((o) => o.id))).toEqual(new Set(created.map((o) => o.admin_graphql_api_id)));
    const last = seen[seen.length - 1]!;
    expect(last.id).toBe(created[0]!.admin_graphql_api_id);
    expect(last.displayFinancialStatus).toBe('PARTIALLY_REFUNDED');
    expect(last.totalPriceSet.shopMoney.amount).toBe('6.70');
    expect(last.refunds[0].totalRefundedSet.shopMoney.amount).toBe('3.35');
    expect(last.refunds[0].refundLineItems.nodes).toEqual([
      { quantity: 1, restockType: 'RETURN', lineItem: { id: last.lineItems.nodes[0].id, sku: 'SKU-0' } },
    ]);
    // Nothing updated after the refund.
    const { data: none } = await client.request<Json>(ORDERS, {
      variables: { query: `updated_at:>'${new Date(Date.now() + 5000).toISOString()}'` },
    });
    expect(none!.orders.nodes).toEqual([]);
  });

  it('answers THROTTLED when a query costs more than the bucket holds, with the throttle status', async () => {
    await start({ bucket: { maximumAvailable: 60, restoreRate: 1 } });
    for (let i = 0; i < 30; i++) shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
    const query = '{ orders(first: 25) { nodes { id } } }';
    // What a query did not use comes back: none of the 25 asked for costs 2 points.
    const few = await client.request<Json>('{ orders(first: 25, query: "id:<0") { nodes { id } } }');
    expect(few.extensions?.cost).toMatchObject({ requestedQueryCost: 27, actualQueryCost: 2 });
    const first = await client.request<Json>(query);
    expect(first.extensions?.cost).toMatchObject({ requestedQueryCost: 27, actualQueryCost: 27 });
    expect((first.extensions as Json).cost.throttleStatus.currentlyAvailable).toBeLessThanOrEqual(45);
    await client.request(query);
    const third = await client.request<Json>(query);
    expect(third.data).toBeUndefined();
    expect(third.errors?.graphQLErrors?.[0]?.extensions?.code).toBe('THROTTLED');
    expect(third.extensions?.cost).toMatchObject({
      requestedQueryCost: 27,
      actualQueryCost: null,
      throttleStatus: { maximumAvailable: 60, restoreRate: 1 },
    });
    expect(shop.metrics.throttled).toBe(1);
    const tooBig = await client.request<Json>('{ orders(first: 250) { nodes { lineItems(first: 250) { nodes { id } } } } }');
    expect(tooBig.errors?.graphQLErrors?.[0]?.extensions?.code).toBe('MAX_COST_EXCEEDED');
  });

  it('lists, creates and deletes webhook subscriptions; finds locations, variants and inventory by SKU', async () => {
    await start();
    const { variantId, inventoryItemId } = shop.addVariant({ sku: 'MOU-01', stock: 12 });
    const create = await client.request<Json>(
      `mutation($uri: String!) { webhookSubscriptionCreate(topic: ORDERS_CREATE, webhookSubscription: { uri: $uri, format: JSON }) {
        webhookSubscription { id topic uri format } userErrors { field message } } }`,
      { variables: { uri: 'https://erp.example.com/api/webhook/shopify/tok' } },
    );
    const sub = create.data!.webhookSubscriptionCreate.webhookSubscription;
    expect(sub).toMatchObject({ topic: 'ORDERS_CREATE', uri: 'https://erp.example.com/api/webhook/shopify/tok', format: 'JSON' });
    const list = await client.request<Json>('{ webhookSubscriptions(first: 10, topics: [ORDERS_CREATE]) { nodes { id uri } } }');
    expect(list.data!.webhookSubscriptions.nodes).toEqual([{ id: sub.id, uri: sub.uri }]);
    const del = await client.request<Json>(
      'mutation($id: ID!) { webhookSubscriptionDelete(id: $id) { deletedWebhookSubscriptionId userErrors { message } } }',
      {
        variables: { id: sub.id },
      },
    );
    expect(del.data!.webhookSubscriptionDelete).toEqual({ deletedWebhookSubscriptionId: sub.id, userErrors: [] });
    expect(shop.subscriptions.size).toBe(0);

    const { data } = await client.request<Json>(
      `query($loc: ID!) {
        locations(first: 5) { nodes { id name isActive } }
        productVariants(first: 2, query: "sku:MOU-01") { nodes { id sku inventoryItem { id inventoryLevel(locationId: $loc) { quantities(names: ["available"]) { name quantity } } } } }
      }`,
      { variables: { loc: shop.primaryLocation } },
    );
    expect(data!.locations.nodes).toEqual([{ id: shop.primaryLocation, name: 'Bodega Central', isActive: true }]);
    expect(data!.productVariants.nodes).toEqual([
      {
        id: variantId,
        sku: 'MOU-01',
        inventoryItem: { id: inventoryItemId, inventoryLevel: { quantities: [{ name: 'available', quantity: 12 }] } },
      },
    ]);
  });

  it('sets quantities compare-and-set: a stale changeFromQuantity is refused and nothing is written', async () => {
    await start();
    const { inventoryItemId } = shop.addVariant({ sku: 'MOU-01', stock: 12 });
    const input = (quantity: number, changeFromQuantity: number | null) => ({
      name: 'available',
      reason: 'correction',
      referenceDocumentUri: 'erp://stock/MOU-01',
      quantities: [{ inventoryItemId, locationId: shop.primaryLocation, quantity, changeFromQuantity }],
    });
    const ok = await client.request<Json>(SET, { variables: { input: input(9, 12), key: 'k-1' } });
    expect(ok.data!.inventorySetQuantities).toEqual({
      inventoryAdjustmentGroup: { reason: 'correction', changes: [{ name: 'available', delta: -3 }] },
      userErrors: [],
    });
    expect(shop.stockOf('MOU-01')).toBe(9);

    const stale = await client.request<Json>(SET, { variables: { input: input(5, 12), key: 'k-2' } });
    expect(stale.data!.inventorySetQuantities.inventoryAdjustmentGroup).toBeNull();
    expect(stale.data!.inventorySetQuantities.userErrors).toEqual([
      expect.objectContaining({ code: 'CHANGE_FROM_QUANTITY_STALE', field: ['input', 'quantities', '0', 'changeFromQuantity'] }),
    ]);
    expect(shop.stockOf('MOU-01')).toBe(9);
    expect(shop.stockWrites.map((w) => [w.before, w.after, w.applied])).toEqual([
      [12, 9, true],
      [9, 5, false],
    ]);
    // null opts out of the check.
    const blind = await client.request<Json>(SET, { variables: { input: input(4, null), key: 'k-3' } });
    expect(blind.data!.inventorySetQuantities.userErrors).toEqual([]);
    expect(shop.stockOf('MOU-01')).toBe(4);
  });

  it('replays an idempotency key without writing again, refuses it with other arguments, and requires it', async () => {
    await start();
    const { inventoryItemId } = shop.addVariant({ sku: 'MUG', stock: 3 });
    const input = (quantity: number, changeFromQuantity: number) => ({
      name: 'available',
      reason: 'correction',
      quantities: [{ inventoryItemId, locationId: shop.primaryLocation, quantity, changeFromQuantity }],
    });
    const first = await client.request<Json>(SET, { variables: { input: input(8, 3), key: 'same' } });
    // The same request again (a retry after a lost answer): the first answer, not a stale refusal.
    const again = await client.request<Json>(SET, { variables: { input: input(8, 3), key: 'same' } });
    expect(again.data).toEqual(first.data);
    expect(shop.stockWrites.filter((w) => w.applied)).toHaveLength(1);
    expect(shop.idempotentReplays).toBe(1);
    const mismatch = await client.request<Json>(SET, { variables: { input: input(2, 8), key: 'same' } });
    expect(mismatch.data!.inventorySetQuantities.userErrors[0].code).toBe('IDEMPOTENCY_KEY_PARAMETER_MISMATCH');
    expect(shop.stockOf('MUG')).toBe(8);

    const without = await client.request<Json>(
      'mutation($input: InventorySetQuantitiesInput!) { inventorySetQuantities(input: $input) { userErrors { code } } }',
      { variables: { input: input(1, 8) } },
    );
    expect(without.errors?.graphQLErrors?.[0]?.message).toMatch(/@idempotent/);
    const omitted = await client.request<Json>(SET, {
      variables: {
        input: {
          name: 'available',
          reason: 'correction',
          quantities: [{ inventoryItemId, locationId: shop.primaryLocation, quantity: 1 }],
        },
        key: 'k-omit',
      },
    });
    expect(omitted.data!.inventorySetQuantities.userErrors[0].field).toEqual(['input', 'quantities', '0', 'changeFromQuantity']);
    const many = Array.from({ length: 251 }, () => ({
      inventoryItemId,
      locationId: shop.primaryLocation,
      quantity: 1,
      changeFromQuantity: null,
    }));
    const tooMany = await client.request<Json>(SET, {
      variables: { input: { name: 'available', reason: 'correction', quantities: many }, key: 'k-many' },
    });
    expect(tooMany.errors?.graphQLErrors?.[0]?.extensions?.code).toBe('MAX_INPUT_SIZE_EXCEEDED');
    expect(shop.stockOf('MUG')).toBe(8);
  });

  it('sends signed order and refund webhooks that webhook-ingest verifies and reads to the cent', async () => {
    const receiver = await webhookReceiver();
    try {
      await start();
      for (const topic of ['ORDERS_CREATE', 'REFUNDS_CREATE', 'ORDERS_CANCELLED'] as const)
        shop.addSubscription({ topic, uri: `${receiver.url}/api/webhook/shopify/tok` });
      shop.addVariant({ sku: 'MOU-01', price: '19.99', stock: 10 });
      const order = shop.createOrder({ lines: [{ sku: 'MOU-01', quantity: 3 }], shipping: '4.25' });
      expect(shop.stockOf('MOU-01')).toBe(7);
      shop.refundOrder(order.id as number, { lines: [{ sku: 'MOU-01', quantity: 1 }] });
      expect(shop.stockOf('MOU-01')).toBe(8);
      shop.cancelOrder(order.id as number);
      await shop.settled();
      expect(receiver.received.map((r) => r.headers['x-shopify-topic'])).toEqual(['orders/create', 'refunds/create', 'orders/cancelled']);
      for (const r of receiver.received) {
        expect(verifySignature(r.body, shop.apiSecret, String(r.headers['x-shopify-hmac-sha256']))).toBe(true);
        expect(verifySignature(r.body, 'other', String(r.headers['x-shopify-hmac-sha256']))).toBe(false);
        expect(r.headers).toMatchObject({ 'x-shopify-shop-domain': shop.shopDomain, 'x-shopify-api-version': '2026-04' });
        const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
        expect(classify({ plataforma: 'shopify', recurso: 'pedido', headers, body: r.body })).toMatchObject({
          kind: 'entrega',
          referencia: expect.stringContaining(String(order.id)),
        });
      }
      const created = JSON.parse(receiver.received[0]!.body.toString()) as Json;
      expect(created.total_price).toBe('64.22');
      expect(planPedidoVenta(shopifyPedidoIntent(created)).total).toBe('64.22');
      const refund = shopifyReembolsoIntent(JSON.parse(receiver.received[1]!.body.toString()));
      expect(refund?.monto.toFixed(2)).toBe('19.99');
      expect(refund?.lineas).toEqual([expect.objectContaining({ id_linea: String((created.line_items as Json[])[0]!.id), reponer: true })]);
      expect(shopifyPedidoIntent(JSON.parse(receiver.received[2]!.body.toString())).accion).toBe('anular');
    } finally {
      await receiver.close();
    }
  });

  it('duplicates an event with the same event id, and jitter delivers concurrent events out of order', async () => {
    const receiver = await webhookReceiver();
    try {
      await start({ faults: { duplicate: 1, seed: 3 } });
      shop.addSubscription({ topic: 'ORDERS_CREATE', uri: receiver.url });
      shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[0]!.headers['x-shopify-event-id']).toBe(receiver.received[1]!.headers['x-shopify-event-id']);
      expect(receiver.received[0]!.body.equals(receiver.received[1]!.body)).toBe(true);

      receiver.received.length = 0;
      shop.setFaults({ jitterMs: 80, seed: 5 });
      const ids = Array.from({ length: 20 }, () => shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] }).id as number);
      await shop.settled();
      const arrived = receiver.received.map((r) => (JSON.parse(r.body.toString()) as Json).id as number);
      expect([...arrived].sort((a, b) => a - b)).toEqual(ids);
      expect(arrived).not.toEqual(ids);
    } finally {
      await receiver.close();
    }
  });

  it('retries a failed delivery on its schedule with the same ids, then deletes a subscription made through the API', async () => {
    const receiver = await webhookReceiver(() => 500);
    try {
      await start({ retryScheduleMs: [5, 5, 5, 5, 5, 5, 5, 5] });
      const { data } = await client.request<Json>(
        `mutation($uri: String!) { webhookSubscriptionCreate(topic: ORDERS_CREATE, webhookSubscription: { uri: $uri }) { webhookSubscription { id } } }`,
        { variables: { uri: receiver.url } },
      );
      const admin = shop.addSubscription({ topic: 'ORDERS_CREATE', uri: `${receiver.url}/admin-made` });
      shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      const viaApi = receiver.received.filter((r) => r.path === '/');
      expect(viaApi).toHaveLength(9);
      expect(new Set(viaApi.map((r) => r.headers['x-shopify-event-id'])).size).toBe(1);
      expect(new Set(viaApi.map((r) => r.headers['x-shopify-webhook-id'])).size).toBe(1);
      const left = await client.request<Json>('{ webhookSubscriptions(first: 10) { nodes { id } } }');
      expect(left.data!.webhookSubscriptions.nodes).toEqual([{ id: admin }]);
      expect(left.data!.webhookSubscriptions.nodes).not.toContainEqual({ id: data!.webhookSubscriptionCreate.webhookSubscription.id });

      // A delivery that succeeds on a retry keeps the subscription.
      receiver.received.length = 0;
      await client.request(
        `mutation($uri: String!) { webhookSubscriptionCreate(topic: ORDERS_CREATE, webhookSubscription: { uri: $uri }) { userErrors { message } } }`,
        {
          variables: { uri: `${receiver.url}/second` },
        },
      );
      let calls = 0;
      receiver.setAnswer((r) => (r.path === '/second' && ++calls >= 3 ? 200 : 500));
      shop.createOrder({ lines: [{ sku: 'A', quantity: 1 }] });
      await shop.settled();
      expect(receiver.received.filter((r) => r.path === '/second')).toHaveLength(3);
      expect(shop.subscriptions.size).toBe(2);
    } finally {
      await receiver.close();
    }
  });
});
