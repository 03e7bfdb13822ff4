import { z } from 'zod';
import { webhookSubjects } from './webhooks';

/*
 * The platforms' standard payloads as the inbound webhooks read them, for the reference. The
 * gateway hands the raw bytes to webhook-ingest untouched (signatures are computed over them),
 * so these shapes document what is used; other fields of the platforms' payloads are accepted
 * and ignored.
 */

const Cantidad = z.union([z.number(), z.string()]);
const Importe = z.string().meta({ description: 'Importe decimal en texto, como lo envía la plataforma' });

/** Platform A (WooCommerce) order, `POST /api/webhook/woocommerce/{token}`. */
export const WooCommerceOrder = z.looseObject({
  id: z.number().int(),
  status: z.string().meta({
    description:
      'processing y completed: venta Completada; pending y on-hold: Pendiente; cancelled, refunded y failed: ninguna venta (o se anula la ya creada)',
  }),
  date_created: z.string().optional(),
  date_modified_gmt: z.string().optional(),
  billing: z.looseObject({ first_name: z.string(), last_name: z.string(), email: z.string() }),
  line_items: z.array(
    z.looseObject({
      product_id: z.number().int(),
      variation_id: z.number().int().optional(),
      sku: z.string().optional(),
      name: z.string(),
      quantity: z.number().int(),
      total: Importe.meta({ description: 'Después de cupones y antes de impuestos (también con prices_include_tax)' }),
      total_tax: Importe.optional(),
    }),
  ),
  shipping_lines: z
    .array(z.looseObject({ method_title: z.string().optional(), total: Importe, total_tax: Importe.optional() }))
    .optional()
    .meta({ description: 'Cada envío es una línea del producto de servicio de la integración (ENVIO si no tiene uno)' }),
  fee_lines: z
    .array(z.looseObject({ name: z.string().optional(), total: Importe, total_tax: Importe.optional() }))
    .optional()
    .meta({ description: 'Cargos como líneas del producto de servicio; un cargo negativo es un descuento repartido entre las líneas' }),
  refunds: z
    .array(z.looseObject({ id: z.number().int(), total: Importe }))
    .optional()
    .meta({ description: 'Reembolsos: el pedido solo trae su importe, que se anota en la entrega sin generar devolución' }),
  total: Importe.meta({ description: 'Lo cobrado al cliente: el total de la venta, al centavo' }),
  prices_include_tax: z.boolean().optional(),
  payment_method: z.string(),
  payment_method_title: z.string().optional(),
});

/** Platform A (WooCommerce) product, `POST /api/webhook/woocommerce/{token}/producto`; `{id}` alone is a deletion. */
export const WooCommerceProduct = z.looseObject({
  id: z.number().int(),
  name: z.string().optional(),
  sku: z.string().optional(),
  status: z.string().optional().meta({ description: 'publish: producto activo; otro valor: inactivo' }),
  price: z.string().optional(),
  regular_price: z.string().optional(),
  sale_price: z.string().optional(),
  manage_stock: z.boolean().optional(),
  stock_quantity: Cantidad.nullable().optional(),
  date_modified_gmt: z.string().optional(),
});

/** Platform B (Shopify) order, `POST /api/webhook/shopify/{token}`. */
export const ShopifyOrder = z.looseObject({
  id: z.number().int(),
  email: z.string(),
  financial_status: z.string().meta({
    description:
      'paid: venta Completada; pending, authorized y partially_paid: Pendiente; refunded y voided: ninguna venta (o se anula la ya creada)',
  }),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  line_items: z.array(
    z.looseObject({
      id: z.number().int(),
      product_id: z.number().int().nullable().optional(),
      variant_id: z.number().int().nullable().optional(),
      sku: z.string().nullable().optional(),
      title: z.string(),
      quantity: z.number().int(),
      price: Importe,
      discount_allocations: z.array(z.looseObject({ amount: Importe })).optional(),
      tax_lines: z
        .array(z.looseObject({ price: Importe }))
        .optional()
        .meta({ description: 'Se suman a la línea cuando taxes_included es false' }),
    }),
  ),
  shipping_lines: z
    .array(
      z.looseObject({
        title: z.string().optional(),
        price: Importe,
        discount_allocations: z.array(z.looseObject({ amount: Importe })).optional(),
      }),
    )
    .optional()
    .meta({ description: 'Cada envío es una línea del producto de servicio de la integración (ENVIO si no tiene uno)' }),
  total_discounts: Importe.optional().meta({
    description: 'Lo que excede a los descuentos asignados a líneas se reparte entre ellas al centavo',
  }),
  taxes_included: z.boolean().optional(),
  refunds: z
    .array(
      z.looseObject({
        id: z.number().int(),
        refund_line_items: z.array(z.looseObject({ line_item_id: z.number().int(), quantity: z.number().int(), restock_type: z.string() })),
      }),
    )
    .optional()
    .meta({ description: 'Cada reembolso es una devolución una sola vez: con reposición (return, cancel) devuelve el stock' }),
  total_price: Importe.meta({ description: 'Lo cobrado al cliente: el total de la venta, al centavo' }),
  gateway: z.string(),
});

/** WooCommerce checks a new webhook's address with a form-encoded ping. */
export const WebhookPing = z.object({ webhook_id: z.string() });

/** What the inbound webhooks answer once the delivery is stored (or recognised as a duplicate, a ping or a topic that needs nothing). */
export const WebhookReceipt = z.object({
  success: z.literal(true),
  ...webhookSubjects['webhooks.receive'].reply.shape,
});
export type WebhookReceipt = z.output<typeof WebhookReceipt>;
