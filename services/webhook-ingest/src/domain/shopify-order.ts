/*
 * A Shopify order as the GraphQL Admin API answers it (2026-04: Order, LineItem, ShippingLine,
 * Refund, RefundLineItem, MoneyBag; https://shopify.dev/docs/api/admin-graphql/2026-04/objects/Order)
 * in the shape its order webhooks send (the Admin REST order), so that an order read by
 * reconciliation goes through the same intake as a delivered one: ids are the legacy numeric ids
 * the webhooks carry (refunds name lines by them), amounts the shop's currency.
 */

/** How many lines, shipping lines, refunds and refund lines one read of an order takes. */
export interface OrderLimits {
  lines: number;
  shipping: number;
  refunds: number;
  refundLines: number;
}

/** Orders read several to a query: three of these stay under Shopify's 1,000-point requested cost. */
export const BATCH_LIMITS: OrderLimits = { lines: 12, shipping: 2, refunds: 3, refundLines: 10 };
/** One order read alone, when a batched read did not hold all of it. */
export const ONE_ORDER_LIMITS: OrderLimits = { lines: 40, shipping: 3, refunds: 5, refundLines: 25 };

/** The fields read of each line of an order. */
export const LINE_FIELDS = /* GraphQL */ `
  id
  title
  sku
  quantity
  originalUnitPriceSet { shopMoney { amount } }
  discountAllocations { allocatedAmountSet { shopMoney { amount } } }
  taxLines(first: 2) { priceSet { shopMoney { amount } } }
  variant { legacyResourceId }
  product { legacyResourceId }
`;

/** The lines of a long order after the first ones, a page at a time (60 lines stay under 1,000 points). */
export const MORE_LINES = /* GraphQL */ `
  query MoreLines($id: ID!, $after: String!) {
    order(id: $id) {
      lineItems(first: 60, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { ${LINE_FIELDS} }
      }
    }
  }
`;

/** The fields reconciliation reads of each order. */
export function orderSelection(l: OrderLimits): string {
  return /* GraphQL */ `
    legacyResourceId
    createdAt
    updatedAt
    cancelledAt
    email
    taxesIncluded
    displayFinancialStatus
    paymentGatewayNames
    totalPriceSet { shopMoney { amount } }
    totalDiscountsSet { shopMoney { amount } }
    lineItems(first: ${l.lines}) {
      pageInfo { hasNextPage endCursor }
      nodes { ${LINE_FIELDS} }
    }
    shippingLines(first: ${l.shipping}) {
      pageInfo { hasNextPage }
      nodes {
        title
        originalPriceSet { shopMoney { amount } }
        discountAllocations { allocatedAmountSet { shopMoney { amount } } }
        taxLines { priceSet { shopMoney { amount } } }
      }
    }
    refunds(first: ${l.refunds}) {
      legacyResourceId
      totalRefundedSet { shopMoney { amount } }
      refundLineItems(first: ${l.refundLines}) { pageInfo { hasNextPage } nodes { lineItem { id } quantity restockType } }
    }
  `;
}

type Money = { shopMoney: { amount: string } } | null | undefined;
interface Allocation {
  allocatedAmountSet: Money;
}
interface Tax {
  priceSet: Money;
}
export interface GraphqlOrder {
  legacyResourceId: string;
  createdAt: string;
  updatedAt: string;
  cancelledAt: string | null;
  email: string | null;
  taxesIncluded: boolean;
  displayFinancialStatus: string | null;
  paymentGatewayNames: string[];
  totalPriceSet: Money;
  totalDiscountsSet: Money;
  lineItems: {
    pageInfo: { hasNextPage: boolean; endCursor?: string | null };
    nodes: Array<{
      id: string;
      title: string;
      sku: string | null;
      quantity: number;
      originalUnitPriceSet: Money;
      discountAllocations: Allocation[];
      taxLines: Tax[];
      variant: { legacyResourceId: string } | null;
      product: { legacyResourceId: string } | null;
    }>;
  };
  shippingLines: {
    pageInfo: { hasNextPage: boolean };
    nodes: Array<{ title: string; originalPriceSet: Money; discountAllocations: Allocation[]; taxLines: Tax[] }>;
  };
  refunds: Array<{
    legacyResourceId: string;
    totalRefundedSet: Money;
    refundLineItems: {
      pageInfo: { hasNextPage: boolean };
      nodes: Array<{ lineItem: { id: string }; quantity: number; restockType: string }>;
    };
  }>;
}

const amount = (m: Money): string | null => m?.shopMoney.amount ?? null;
/** `gid://shopify/LineItem/123` → `123`. */
const legacyId = (gid: string): string => gid.slice(gid.lastIndexOf('/') + 1);
const allocations = (list: Allocation[]) => list.map((a) => ({ amount: amount(a.allocatedAmountSet) }));
const taxes = (list: Tax[]) => list.map((t) => ({ price: amount(t.priceSet) }));

/** The order in its webhook (Admin REST) shape. */
export function restShapedOrder(o: GraphqlOrder): Record<string, unknown> {
  return {
    id: Number(o.legacyResourceId),
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    cancelled_at: o.cancelledAt,
    email: o.email,
    taxes_included: o.taxesIncluded,
    financial_status: o.displayFinancialStatus?.toLowerCase() ?? null,
    payment_gateway_names: o.paymentGatewayNames,
    total_price: amount(o.totalPriceSet),
    total_discounts: amount(o.totalDiscountsSet) ?? '0.00',
    line_items: o.lineItems.nodes.map((li) => ({
      id: Number(legacyId(li.id)),
      title: li.title,
      sku: li.sku,
      quantity: li.quantity,
      price: amount(li.originalUnitPriceSet),
      discount_allocations: allocations(li.discountAllocations),
      tax_lines: taxes(li.taxLines),
      variant_id: li.variant ? Number(li.variant.legacyResourceId) : null,
      product_id: li.product ? Number(li.product.legacyResourceId) : null,
    })),
    shipping_lines: o.shippingLines.nodes.map((sl) => ({
      title: sl.title,
      price: amount(sl.originalPriceSet),
      discount_allocations: allocations(sl.discountAllocations),
      tax_lines: taxes(sl.taxLines),
    })),
    refunds: o.refunds.map((r) => ({
      id: Number(r.legacyResourceId),
      order_id: Number(o.legacyResourceId),
      // The webhook's refund carries its money as transactions; the total refunded is their sum.
      transactions: [{ kind: 'refund', status: 'success', amount: amount(r.totalRefundedSet) ?? '0.00' }],
      refund_line_items: r.refundLineItems.nodes.map((rl) => ({
        line_item_id: Number(legacyId(rl.lineItem.id)),
        quantity: rl.quantity,
        restock_type: rl.restockType.toLowerCase(),
      })),
    })),
  };
}

/**
 * Whether the read left part of the order out (more lines, shipping lines, refunds or refund
 * lines than it took); `linesPaged`: its lines are read on, page by page, so they do not count.
 */
export function truncated(o: GraphqlOrder, l: OrderLimits, linesPaged = false): boolean {
  return (
    (!linesPaged && o.lineItems.pageInfo.hasNextPage) ||
    o.shippingLines.pageInfo.hasNextPage ||
    o.refunds.length >= l.refunds ||
    o.refunds.some((r) => r.refundLineItems.pageInfo.hasNextPage)
  );
}
