import { parse, validate, type OperationDefinitionNode } from 'graphql';
import { BATCH_LIMITS, MORE_LINES, ONE_ORDER_LIMITS } from '../../../services/webhook-ingest/src/domain/shopify-order';
import { ORDERS_PER_READ, STAMPS, VARIANT_STOCK, ordersById } from '../../../services/webhook-ingest/src/ports/shops/shopify';
import { SINGLE_QUERY_MAX_COST, queryCost } from './shopify-cost';
import { shopifySchema } from './shopify-schema';

/**
 * The queries reconciliation, the stock push and the drift check send Shopify are valid against
 * the Admin API's schema (the simulator's subset of 2026-04) and each costs at most the 1,000
 * points Shopify accepts in one query, by its own calculation: a query over it is refused whole.
 */
describe("webhook-ingest's Shopify queries", () => {
  const cost = (text: string) => {
    const document = parse(text);
    expect(validate(shopifySchema, document)).toEqual([]);
    return queryCost(shopifySchema, document.definitions[0] as OperationDefinitionNode, {}, {});
  };

  it.each([
    ['the listing of changed orders', STAMPS],
    [`${ORDERS_PER_READ} orders read whole at once`, ordersById(ORDERS_PER_READ, BATCH_LIMITS)],
    ['one large order read alone', ordersById(1, ONE_ORDER_LIMITS)],
    ["a long order's further lines", MORE_LINES],
    ["the drift check's stock of every variant", VARIANT_STOCK],
  ])('%s', (_name, text) => {
    const requested = cost(text);
    expect(requested).toBeGreaterThan(0);
    expect(requested).toBeLessThanOrEqual(SINGLE_QUERY_MAX_COST);
  });
});
