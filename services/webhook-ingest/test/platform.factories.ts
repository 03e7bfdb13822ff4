import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Webhook deliveries shaped exactly as WooCommerce (REST API v3 resources, Hookshot headers) and
 * Shopify (Admin REST order resource, webhook headers) send them. Builders take the few fields a
 * test cares about and fill the rest with the platforms' own defaults.
 */

export interface WooLineInput {
  product_id: number;
  variation_id?: number;
  sku?: string;
  name?: string;
  quantity: number;
  /** Line total after discounts, before tax. */
  total: string;
  total_tax?: string;
}

export interface WooOrderInput {
  id: number;
  status: string;
  /** GMT, without zone, as WooCommerce writes it: `2026-03-12T16:04:35`. */
  date_modified_gmt?: string;
  email?: string;
  first_name?: string;
  last_name?: string;
  payment_method?: string;
  payment_method_title?: string;
  line_items: WooLineInput[];
}

const sum = (values: string[]) => (values.reduce((s, v) => s + Math.round(Number(v) * 100), 0) / 100).toFixed(2);

export function wooOrder(input: WooOrderInput): Record<string, unknown> {
  const modified = input.date_modified_gmt ?? '2026-03-12T16:04:35';
  const created = '2026-03-12T16:04:35';
  const itemsTotal = sum(input.line_items.map((l) => l.total));
  const tax = sum(input.line_items.map((l) => l.total_tax ?? '0.00'));
  const billing = {
    first_name: input.first_name ?? 'Ana',
    last_name: input.last_name ?? 'López',
    company: '',
    address_1: 'Calle Arce 1020',
    address_2: '',
    city: 'San Salvador',
    state: 'SS',
    postcode: '01101',
    country: 'SV',
    email: input.email ?? 'ana.lopez@example.com',
    phone: '(503) 2222-3333',
  };
  const { email: _email, phone: _phone, ...shipping } = billing;
  void _email;
  void _phone;
  return {
    id: input.id,
    parent_id: 0,
    status: input.status,
    currency: 'USD',
    version: '8.5.2',
    prices_include_tax: false,
    date_created: created,
    date_modified: modified,
    discount_total: '0.00',
    discount_tax: '0.00',
    shipping_total: '0.00',
    shipping_tax: '0.00',
    cart_tax: tax,
    total: sum([itemsTotal, tax]),
    total_tax: tax,
    customer_id: 0,
    order_key: `wc_order_${randomBytes(6).toString('hex')}`,
    billing,
    shipping: { ...shipping, phone: '' },
    payment_method: input.payment_method ?? 'bacs',
    payment_method_title: input.payment_method_title ?? 'Transferencia bancaria directa',
    transaction_id: '',
    customer_ip_address: '190.86.10.20',
    customer_user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
    created_via: 'checkout',
    customer_note: '',
    date_completed: input.status === 'completed' ? modified : null,
    date_paid: ['processing', 'completed'].includes(input.status) ? created : null,
    cart_hash: 'e3b0c44298fc1c149afbf4c8996fb924',
    number: String(input.id),
    meta_data: [],
    line_items: input.line_items.map((l, i) => ({
      id: 300 + i,
      name: l.name ?? `Producto ${l.product_id}`,
      product_id: l.product_id,
      variation_id: l.variation_id ?? 0,
      quantity: l.quantity,
      tax_class: '',
      subtotal: l.total,
      subtotal_tax: l.total_tax ?? '0.00',
      total: l.total,
      total_tax: l.total_tax ?? '0.00',
      taxes: l.total_tax ? [{ id: 75, total: l.total_tax, subtotal: l.total_tax }] : [],
      meta_data: [],
      sku: l.sku ?? '',
      price: Number(l.total) / l.quantity,
      image: { id: '', src: '' },
      parent_name: null,
    })),
    tax_lines:
      Number(tax) > 0
        ? [
            {
              id: 318,
              rate_code: 'SV-IVA-1',
              rate_id: 75,
              label: 'IVA',
              compound: false,
              tax_total: tax,
              shipping_tax_total: '0.00',
              rate_percent: 13,
              meta_data: [],
            },
          ]
        : [],
    shipping_lines: [],
    fee_lines: [],
    coupon_lines: [],
    refunds: [],
    payment_url: `https://tienda.example.com/checkout/order-pay/${input.id}/`,
    is_editable: false,
    needs_payment: false,
    needs_processing: true,
    date_created_gmt: created,
    date_modified_gmt: modified,
    date_completed_gmt: input.status === 'completed' ? modified : null,
    date_paid_gmt: ['processing', 'completed'].includes(input.status) ? created : null,
    currency_symbol: '$',
    _links: {
      self: [{ href: `https://tienda.example.com/wp-json/wc/v3/orders/${input.id}` }],
      collection: [{ href: 'https://tienda.example.com/wp-json/wc/v3/orders' }],
    },
  };
}

export interface WooProductInput {
  id: number;
  name: string;
  sku: string;
  regular_price: string;
  sale_price?: string;
  status?: 'publish' | 'draft' | 'pending' | 'private';
  manage_stock?: boolean;
  stock_quantity?: number | null;
  date_modified_gmt?: string;
}

export function wooProduct(input: WooProductInput): Record<string, unknown> {
  const modified = input.date_modified_gmt ?? '2026-03-12T16:04:35';
  const price = input.sale_price || input.regular_price;
  return {
    id: input.id,
    name: input.name,
    slug: input.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    permalink: `https://tienda.example.com/producto/${input.id}/`,
    date_created: '2026-01-10T09:00:00',
    date_created_gmt: '2026-01-10T15:00:00',
    date_modified: modified,
    date_modified_gmt: modified,
    type: 'simple',
    status: input.status ?? 'publish',
    featured: false,
    catalog_visibility: 'visible',
    description: '',
    short_description: '',
    sku: input.sku,
    price,
    regular_price: input.regular_price,
    sale_price: input.sale_price ?? '',
    date_on_sale_from: null,
    date_on_sale_from_gmt: null,
    date_on_sale_to: null,
    date_on_sale_to_gmt: null,
    on_sale: Boolean(input.sale_price),
    purchasable: true,
    total_sales: 0,
    virtual: false,
    downloadable: false,
    downloads: [],
    download_limit: -1,
    download_expiry: -1,
    external_url: '',
    button_text: '',
    tax_status: 'taxable',
    tax_class: '',
    manage_stock: input.manage_stock ?? true,
    stock_quantity: input.manage_stock === false ? null : (input.stock_quantity ?? null),
    backorders: 'no',
    backorders_allowed: false,
    backordered: false,
    low_stock_amount: null,
    sold_individually: false,
    weight: '',
    dimensions: { length: '', width: '', height: '' },
    shipping_required: true,
    shipping_taxable: true,
    shipping_class: '',
    shipping_class_id: 0,
    reviews_allowed: true,
    average_rating: '0',
    rating_count: 0,
    upsell_ids: [],
    cross_sell_ids: [],
    parent_id: 0,
    purchase_note: '',
    categories: [{ id: 15, name: 'Uncategorized', slug: 'uncategorized' }],
    tags: [],
    images: [],
    attributes: [],
    default_attributes: [],
    variations: [],
    grouped_products: [],
    menu_order: 0,
    price_html: `<span class="woocommerce-Price-amount amount">$${price}</span>`,
    related_ids: [],
    meta_data: [],
    stock_status: 'instock',
    has_options: false,
    post_password: '',
    global_unique_id: '',
    _links: {
      self: [{ href: `https://tienda.example.com/wp-json/wc/v3/products/${input.id}` }],
      collection: [{ href: 'https://tienda.example.com/wp-json/wc/v3/products' }],
    },
  };
}

export interface ShopifyLineInput {
  /** Shopify ids exceed 2^53: give them as digit strings to keep them exact in the body. */
  id: string;
  product_id: string;
  variant_id: string;
  sku: string;
  title: string;
  quantity: number;
  price: string;
}

export interface ShopifyOrderInput {
  id: string;
  financial_status: string;
  cancelled_at?: string | null;
  updated_at?: string;
  email?: string;
  gateway?: string;
  line_items: ShopifyLineInput[];
}

/**
 * A Shopify order body. Ids go into the JSON as bare numbers (as Shopify writes them) even when
 * they exceed what a JavaScript number holds.
 */
export function shopifyOrderBody(input: ShopifyOrderInput): string {
  const total = sum(input.line_items.map((l) => (Number(l.price) * l.quantity).toFixed(2)));
  const email = input.email ?? 'jon@example.com';
  const order = {
    id: `@@${input.id}@@`,
    admin_graphql_api_id: `gid://shopify/Order/${input.id}`,
    app_id: 580111,
    browser_ip: '190.86.10.20',
    buyer_accepts_marketing: false,
    cancel_reason: input.cancelled_at ? 'customer' : null,
    cancelled_at: input.cancelled_at ?? null,
    cart_token: null,
    checkout_id: null,
    checkout_token: null,
    client_details: null,
    closed_at: null,
    confirmation_number: 'HN4XR7PQ2',
    confirmed: true,
    contact_email: email,
    created_at: '2026-03-12T10:04:35-06:00',
    currency: 'USD',
    current_subtotal_price: total,
    current_total_discounts: '0.00',
    current_total_price: total,
    current_total_tax: '0.00',
    customer_locale: 'es',
    discount_codes: [],
    email,
    estimated_taxes: false,
    financial_status: input.financial_status,
    fulfillment_status: null,
    gateway: input.gateway ?? 'manual',
    landing_site: null,
    name: '#1001',
    note: null,
    note_attributes: [],
    number: 1,
    order_number: 1001,
    payment_gateway_names: [input.gateway ?? 'manual'],
    phone: null,
    presentment_currency: 'USD',
    processed_at: '2026-03-12T10:04:35-06:00',
    source_name: 'web',
    subtotal_price: total,
    tags: '',
    tax_lines: [],
    taxes_included: true,
    test: false,
    token: randomBytes(16).toString('hex'),
    total_discounts: '0.00',
    total_line_items_price: total,
    total_outstanding: '0.00',
    total_price: total,
    total_tax: '0.00',
    total_weight: 0,
    updated_at: input.updated_at ?? '2026-03-12T10:04:36-06:00',
    user_id: null,
    billing_address: {
      first_name: 'Jon',
      last_name: 'Snow',
      address1: 'Calle Arce 1020',
      city: 'San Salvador',
      country: 'El Salvador',
      country_code: 'SV',
      name: 'Jon Snow',
    },
    customer: { id: '@@115310627314723954@@', email, first_name: 'Jon', last_name: 'Snow', state: 'disabled', currency: 'USD' },
    discount_applications: [],
    fulfillments: [],
    line_items: input.line_items.map((l) => ({
      id: `@@${l.id}@@`,
      admin_graphql_api_id: `gid://shopify/LineItem/${l.id}`,
      current_quantity: l.quantity,
      fulfillable_quantity: l.quantity,
      fulfillment_service: 'manual',
      fulfillment_status: null,
      gift_card: false,
      grams: 100,
      name: l.title,
      price: l.price,
      price_set: { shop_money: { amount: l.price, currency_code: 'USD' }, presentment_money: { amount: l.price, currency_code: 'USD' } },
      product_exists: true,
      product_id: `@@${l.product_id}@@`,
      properties: [],
      quantity: l.quantity,
      requires_shipping: true,
      sku: l.sku,
      taxable: true,
      title: l.title,
      total_discount: '0.00',
      variant_id: `@@${l.variant_id}@@`,
      variant_inventory_management: 'shopify',
      variant_title: null,
      vendor: null,
      tax_lines: [],
      duties: [],
      discount_allocations: [],
    })),
    payment_terms: null,
    refunds: [],
    shipping_address: null,
    shipping_lines: [],
  };
  return JSON.stringify(order).replace(/"@@(\d+)@@"/g, '$1');
}

export const sign = (body: string | Buffer, secret: string) => createHmac('sha256', secret).update(body).digest('base64');

/** Headers of a WooCommerce delivery (its Hookshot client), signed when a secret is given. */
export function wooHeaders(body: string, topic: string, secret?: string): Record<string, string> {
  const [resource, event] = topic.split('.');
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'WooCommerce/8.5.2 Hookshot (WordPress/6.4.3)',
    'X-WC-Webhook-Source': 'https://tienda.example.com/',
    'X-WC-Webhook-Topic': topic,
    'X-WC-Webhook-Resource': resource!,
    'X-WC-Webhook-Event': event!,
    'X-WC-Webhook-ID': '12',
    // A new id on every attempt, retries included: it cannot deduplicate.
    'X-WC-Webhook-Delivery-ID': randomBytes(16).toString('hex'),
    ...(secret ? { 'X-WC-Webhook-Signature': sign(body, secret) } : {}),
  };
}

/** Headers of a Shopify delivery; `eventId` is the same on every retry of one event. */
export function shopifyHeaders(body: string, topic: string, secret?: string, eventId: string = randomUUID()): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'Shopify-Captain-Hook',
    'X-Shopify-Topic': topic,
    'X-Shopify-Shop-Domain': 'tienda-demo.myshopify.com',
    'X-Shopify-API-Version': '2025-01',
    'X-Shopify-Webhook-Id': randomUUID(),
    'X-Shopify-Event-Id': eventId,
    'X-Shopify-Triggered-At': new Date().toISOString(),
    ...(secret ? { 'X-Shopify-Hmac-Sha256': sign(body, secret) } : {}),
  };
}

/** WooCommerce's check of a new webhook's URL: a form body, no signature, no topic. */
export function wooPing(webhookId = 12): { body: string; headers: Record<string, string> } {
  return {
    body: `webhook_id=${webhookId}`,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'WooCommerce/8.5.2 Hookshot (WordPress/6.4.3)' },
  };
}

const DIR = path.resolve(__dirname, 'fixtures/platforms');

/**
 * A payload the platforms publish (`fixtures/platforms` beside this file, sources in its README),
 * as the text to deliver. `edits` replace exact text (ids, SKUs, a status): each must occur, so a
 * fixture that changes under a test fails it instead of silently testing something else.
 * Shopify's ids exceed 2^53, so edits work on the text, never on a parsed copy.
 */
export function published(file: string, edits: Array<[string, string]> = [], options: { unwrap?: string } = {}): string {
  let text = readFileSync(path.join(DIR, file), 'utf8');
  if (options.unwrap) {
    // Only for payloads whose numbers a double holds exactly (the REST examples' 9-digit ids).
    let value: unknown = JSON.parse(text);
    for (const key of options.unwrap.split('.')) value = (value as Record<string, unknown>)[key];
    text = JSON.stringify(value, null, 2);
  }
  for (const [from, to] of edits) {
    if (!text.includes(from)) throw new Error(`${file}: "${from}" not found`);
    text = text.split(from).join(to);
  }
  return text;
}
