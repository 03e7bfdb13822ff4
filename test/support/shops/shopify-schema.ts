import { buildSchema } from 'graphql';

/** The Admin API version the simulator answers, and the only one it serves. */
export const SHOPIFY_API_VERSION = '2026-04';

/*
 * The part of the Shopify GraphQL Admin API (version 2026-04) the simulator serves, with the
 * reference's own type, field, argument and enum names: https://shopify.dev/docs/api/admin-graphql/2026-04
 * (queries `orders`, `order`, `webhookSubscriptions`, `locations`, `productVariants`,
 * `inventoryItems`, `inventoryItem`; mutations `webhookSubscriptionCreate`,
 * `webhookSubscriptionDelete`, `inventorySetQuantities`; objects Order, LineItem, Refund,
 * RefundLineItem, MoneyBag, DiscountAllocation, TaxLine, ProductVariant, InventoryItem, InventoryLevel, Location,
 * WebhookSubscription, InventoryAdjustmentGroup; enums OrderSortKeys, WebhookSubscriptionTopic,
 * InventorySetQuantitiesUserErrorCode, RefundLineItemRestockType). Fields the API has and this
 * subset lacks fail validation, as a misspelt field would. The `@idempotent` directive: Shopify's
 * "Idempotent requests" usage guide and the changelog "Making idempotency mandatory for inventory
 * adjustments and refund mutations" (2026-04).
 */
export const shopifySchema = buildSchema(/* GraphQL */ `
  scalar DateTime
  scalar Decimal
  scalar Money
  scalar URL
  scalar UnsignedInt64

  directive @idempotent(key: String!) on FIELD

  type Query {
    orders(
      first: Int
      after: String
      last: Int
      before: String
      query: String
      sortKey: OrderSortKeys = PROCESSED_AT
      reverse: Boolean = false
    ): OrderConnection!
    order(id: ID!): Order
    webhookSubscriptions(
      first: Int
      after: String
      topics: [WebhookSubscriptionTopic!]
      uri: String
      query: String
    ): WebhookSubscriptionConnection!
    webhookSubscription(id: ID!): WebhookSubscription
    locations(first: Int, after: String, includeInactive: Boolean, query: String): LocationConnection!
    location(id: ID): Location
    productVariants(first: Int, after: String, query: String): ProductVariantConnection!
    inventoryItems(first: Int, after: String, query: String): InventoryItemConnection!
    inventoryItem(id: ID!): InventoryItem
    shop: Shop!
  }

  type Mutation {
    webhookSubscriptionCreate(
      topic: WebhookSubscriptionTopic!
      webhookSubscription: WebhookSubscriptionInput!
    ): WebhookSubscriptionCreatePayload
    webhookSubscriptionDelete(id: ID!): WebhookSubscriptionDeletePayload
    inventorySetQuantities(input: InventorySetQuantitiesInput!): InventorySetQuantitiesPayload
  }

  type Shop {
    id: ID!
    name: String!
    myshopifyDomain: String!
    currencyCode: CurrencyCode!
  }

  enum CurrencyCode {
    USD
  }

  type PageInfo {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    startCursor: String
    endCursor: String
  }

  enum OrderSortKeys {
    CREATED_AT
    CURRENT_TOTAL_PRICE
    CUSTOMER_NAME
    DESTINATION
    FINANCIAL_STATUS
    FULFILLMENT_STATUS
    ID
    ORDER_NUMBER
    PO_NUMBER
    PROCESSED_AT
    RELEVANCE
    TOTAL_ITEMS_QUANTITY
    TOTAL_PRICE
    UPDATED_AT
  }

  type OrderConnection {
    edges: [OrderEdge!]!
    nodes: [Order!]!
    pageInfo: PageInfo!
  }
  type OrderEdge {
    cursor: String!
    node: Order!
  }

  enum OrderCancelReason {
    CUSTOMER
    DECLINED
    FRAUD
    INVENTORY
    OTHER
    STAFF
  }

  enum OrderDisplayFinancialStatus {
    AUTHORIZED
    EXPIRED
    PAID
    PARTIALLY_PAID
    PARTIALLY_REFUNDED
    PENDING
    REFUNDED
    VOIDED
  }

  type MoneyV2 {
    amount: Decimal!
    currencyCode: CurrencyCode!
  }
  type MoneyBag {
    shopMoney: MoneyV2!
    presentmentMoney: MoneyV2!
  }

  type Order {
    id: ID!
    legacyResourceId: UnsignedInt64!
    name: String!
    email: String
    createdAt: DateTime!
    updatedAt: DateTime!
    processedAt: DateTime!
    cancelledAt: DateTime
    cancelReason: OrderCancelReason
    closed: Boolean!
    test: Boolean!
    taxesIncluded: Boolean!
    currencyCode: CurrencyCode!
    displayFinancialStatus: OrderDisplayFinancialStatus
    subtotalPriceSet: MoneyBag
    totalPriceSet: MoneyBag!
    currentTotalPriceSet: MoneyBag!
    totalTaxSet: MoneyBag
    totalDiscountsSet: MoneyBag
    totalShippingPriceSet: MoneyBag!
    totalRefundedSet: MoneyBag!
    paymentGatewayNames: [String!]!
    lineItems(first: Int, after: String): LineItemConnection!
    shippingLines(first: Int, after: String): ShippingLineConnection!
    refunds(first: Int): [Refund!]!
  }

  type LineItemConnection {
    edges: [LineItemEdge!]!
    nodes: [LineItem!]!
    pageInfo: PageInfo!
  }
  type LineItemEdge {
    cursor: String!
    node: LineItem!
  }
  type LineItem {
    id: ID!
    name: String!
    title: String!
    sku: String
    quantity: Int!
    currentQuantity: Int!
    refundableQuantity: Int!
    originalUnitPriceSet: MoneyBag!
    discountedUnitPriceSet: MoneyBag!
    originalTotalSet: MoneyBag!
    discountAllocations: [DiscountAllocation!]!
    taxLines(first: Int): [TaxLine!]!
    variant: ProductVariant
    product: Product
  }

  type DiscountAllocation {
    allocatedAmountSet: MoneyBag!
  }
  type TaxLine {
    title: String!
    rate: Float
    priceSet: MoneyBag!
  }

  type ShippingLineConnection {
    edges: [ShippingLineEdge!]!
    nodes: [ShippingLine!]!
    pageInfo: PageInfo!
  }
  type ShippingLineEdge {
    cursor: String!
    node: ShippingLine!
  }
  type ShippingLine {
    id: ID
    title: String!
    code: String
    originalPriceSet: MoneyBag!
    discountedPriceSet: MoneyBag!
    discountAllocations: [DiscountAllocation!]!
    taxLines: [TaxLine!]!
  }

  type Refund {
    id: ID!
    legacyResourceId: UnsignedInt64!
    createdAt: DateTime
    updatedAt: DateTime!
    note: String
    totalRefundedSet: MoneyBag!
    refundLineItems(first: Int, after: String): RefundLineItemConnection!
  }
  type RefundLineItemConnection {
    edges: [RefundLineItemEdge!]!
    nodes: [RefundLineItem!]!
    pageInfo: PageInfo!
  }
  type RefundLineItemEdge {
    cursor: String!
    node: RefundLineItem!
  }
  enum RefundLineItemRestockType {
    CANCEL
    LEGACY_RESTOCK
    NO_RESTOCK
    RETURN
  }
  type RefundLineItem {
    id: ID
    lineItem: LineItem!
    quantity: Int!
    restockType: RefundLineItemRestockType!
    restocked: Boolean!
    priceSet: MoneyBag!
    subtotalSet: MoneyBag!
    totalTaxSet: MoneyBag!
    location: Location
  }

  type Product {
    id: ID!
    legacyResourceId: UnsignedInt64!
    title: String!
  }

  type ProductVariantConnection {
    edges: [ProductVariantEdge!]!
    nodes: [ProductVariant!]!
    pageInfo: PageInfo!
  }
  type ProductVariantEdge {
    cursor: String!
    node: ProductVariant!
  }
  type ProductVariant {
    id: ID!
    legacyResourceId: UnsignedInt64!
    sku: String
    title: String!
    displayName: String!
    price: Money!
    inventoryQuantity: Int
    inventoryItem: InventoryItem!
    product: Product!
  }

  type InventoryItemConnection {
    edges: [InventoryItemEdge!]!
    nodes: [InventoryItem!]!
    pageInfo: PageInfo!
  }
  type InventoryItemEdge {
    cursor: String!
    node: InventoryItem!
  }
  type InventoryItem {
    id: ID!
    legacyResourceId: UnsignedInt64!
    sku: String
    tracked: Boolean!
    variant: ProductVariant!
    inventoryLevel(locationId: ID!): InventoryLevel
    inventoryLevels(first: Int, after: String): InventoryLevelConnection!
  }

  type InventoryLevelConnection {
    edges: [InventoryLevelEdge!]!
    nodes: [InventoryLevel!]!
    pageInfo: PageInfo!
  }
  type InventoryLevelEdge {
    cursor: String!
    node: InventoryLevel!
  }
  type InventoryLevel {
    id: ID!
    item: InventoryItem!
    location: Location!
    quantities(names: [String!]!): [InventoryQuantity!]!
    updatedAt: DateTime!
  }
  type InventoryQuantity {
    id: ID!
    name: String!
    quantity: Int!
    updatedAt: DateTime
  }

  type LocationConnection {
    edges: [LocationEdge!]!
    nodes: [Location!]!
    pageInfo: PageInfo!
  }
  type LocationEdge {
    cursor: String!
    node: Location!
  }
  type Location {
    id: ID!
    legacyResourceId: UnsignedInt64!
    name: String!
    isActive: Boolean!
    fulfillsOnlineOrders: Boolean!
  }

  enum WebhookSubscriptionTopic {
    INVENTORY_LEVELS_UPDATE
    ORDERS_CANCELLED
    ORDERS_CREATE
    ORDERS_FULFILLED
    ORDERS_PAID
    ORDERS_PARTIALLY_FULFILLED
    ORDERS_UPDATED
    PRODUCTS_UPDATE
    REFUNDS_CREATE
  }
  enum WebhookSubscriptionFormat {
    JSON
    XML
  }
  type ApiVersion {
    handle: String!
    displayName: String!
    supported: Boolean!
  }
  type WebhookSubscription {
    id: ID!
    legacyResourceId: UnsignedInt64!
    topic: WebhookSubscriptionTopic!
    uri: String!
    format: WebhookSubscriptionFormat!
    filter: String
    includeFields: [String!]!
    apiVersion: ApiVersion!
    createdAt: DateTime!
    updatedAt: DateTime!
  }
  type WebhookSubscriptionConnection {
    edges: [WebhookSubscriptionEdge!]!
    nodes: [WebhookSubscription!]!
    pageInfo: PageInfo!
  }
  type WebhookSubscriptionEdge {
    cursor: String!
    node: WebhookSubscription!
  }
  input WebhookSubscriptionInput {
    uri: String
    format: WebhookSubscriptionFormat
    filter: String
    includeFields: [String!]
    metafieldNamespaces: [String!]
  }
  type UserError {
    field: [String!]
    message: String!
  }
  type WebhookSubscriptionCreatePayload {
    webhookSubscription: WebhookSubscription
    userErrors: [UserError!]!
  }
  type WebhookSubscriptionDeletePayload {
    deletedWebhookSubscriptionId: ID
    userErrors: [UserError!]!
  }

  input InventoryQuantityInput {
    inventoryItemId: ID!
    locationId: ID!
    quantity: Int!
    changeFromQuantity: Int
  }
  input InventorySetQuantitiesInput {
    name: String!
    reason: String!
    referenceDocumentUri: String
    quantities: [InventoryQuantityInput!]!
  }
  enum InventorySetQuantitiesUserErrorCode {
    CHANGE_FROM_QUANTITY_STALE
    IDEMPOTENCY_CONCURRENT_REQUEST
    IDEMPOTENCY_KEY_PARAMETER_MISMATCH
    INVALID_INVENTORY_ITEM
    INVALID_LOCATION
    INVALID_NAME
    INVALID_QUANTITY_NEGATIVE
    INVALID_QUANTITY_TOO_HIGH
    INVALID_REASON
    INVALID_REFERENCE_DOCUMENT
    ITEM_NOT_STOCKED_AT_LOCATION
    NO_DUPLICATE_INVENTORY_ITEM_ID_GROUP_ID_PAIR
  }
  type InventorySetQuantitiesUserError {
    code: InventorySetQuantitiesUserErrorCode
    field: [String!]
    message: String!
  }
  type InventoryChange {
    name: String!
    delta: Int!
    quantityAfterChange: Int
    item: InventoryItem
    location: Location
    ledgerDocumentUri: URL
  }
  type InventoryAdjustmentGroup {
    id: ID!
    createdAt: DateTime!
    reason: String!
    referenceDocumentUri: String
    changes(inventoryItemIds: [ID!], locationIds: [ID!], quantityNames: [String!]): [InventoryChange!]!
  }
  type InventorySetQuantitiesPayload {
    inventoryAdjustmentGroup: InventoryAdjustmentGroup
    userErrors: [InventorySetQuantitiesUserError!]!
  }
`);
