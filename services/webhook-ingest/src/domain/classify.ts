import { createHash } from 'node:crypto';
import { platformOrderReference, type Plataforma, type RecursoWebhook } from '@erp/contracts';
import { idText, parseJsonExact } from './json';

/** Headers kept with a delivery (and forwarded by the gateway): the platforms' own, and the content type. */
export function isRelevantHeader(name: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith('x-wc-') || n.startsWith('x-shopify-') || n === 'content-type' || n === 'user-agent';
}

/** Order topics of Shopify we act on; every other topic is acknowledged and ignored. */
const SHOPIFY_ORDER_TOPICS = new Set([
  'orders/create',
  'orders/updated',
  'orders/paid',
  'orders/cancelled',
  'orders/fulfilled',
  'orders/partially_fulfilled',
  'refunds/create',
]);
const WOO_TOPICS: Record<RecursoWebhook, Set<string>> = {
  pedido: new Set(['order.created', 'order.updated', 'order.restored']),
  producto: new Set(['product.created', 'product.updated', 'product.restored', 'product.deleted']),
};

export type Classification =
  /** WooCommerce checks a new webhook's URL with `webhook_id=N` as a form body, unsigned. */
  | { kind: 'ping' }
  /** Acknowledged, not stored: a topic this endpoint does not act on. */
  | { kind: 'ignorar'; motivo: string }
  | { kind: 'entrega'; tema: string | null; clave: string; referencia: string | null };

export interface IncomingDelivery {
  plataforma: Plataforma;
  recurso: RecursoWebhook;
  headers: Record<string, string>;
  body: Buffer;
}

export function isWooPing(d: IncomingDelivery): boolean {
  if (d.plataforma !== 'woocommerce' || d.body.length > 64) return false;
  return /^webhook_id=\d+$/.test(d.body.toString('utf8').trim());
}

/**
 * Decides what a verified delivery is and the key that makes a repeated one a duplicate:
 * Shopify's `X-Shopify-Event-Id` (the same on every retry of one event); for a WooCommerce order
 * the hash of its body (its delivery id changes on every attempt, and a retry sends the same
 * body); for a WooCommerce product its id with its `date_modified_gmt`, else a hash of the body.
 */
export function classify(d: IncomingDelivery): Classification {
  if (isWooPing(d)) return { kind: 'ping' };
  const bodyHash = `sha256:${createHash('sha256').update(d.body).digest('hex')}`;
  let json: Record<string, unknown> | undefined;
  try {
    const parsed = parseJsonExact(d.body.toString('utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  const id = idText(json?.id);

  if (d.plataforma === 'shopify') {
    const topic = d.headers['x-shopify-topic']?.trim() || null;
    if (d.recurso !== 'pedido') return { kind: 'ignorar', motivo: 'Shopify solo envía pedidos a esta ruta' };
    if (topic !== null && !SHOPIFY_ORDER_TOPICS.has(topic)) return { kind: 'ignorar', motivo: `Tema ${topic} no se procesa` };
    const eventId = d.headers['x-shopify-event-id']?.trim();
    const webhookId = d.headers['x-shopify-webhook-id']?.trim();
    const clave = eventId ? `evento:${eventId}` : webhookId ? `webhook:${webhookId}` : bodyHash;
    // A refund names its order in `order_id`; every other topic is the order itself.
    const orderId = topic === 'refunds/create' ? idText(json?.order_id) : id;
    return { kind: 'entrega', tema: topic, clave, referencia: orderId ? platformOrderReference('shopify', orderId) : null };
  }

  const topic = d.headers['x-wc-webhook-topic']?.trim() || null;
  if (topic !== null && !WOO_TOPICS[d.recurso].has(topic)) return { kind: 'ignorar', motivo: `Tema ${topic} no se procesa en esta ruta` };
  const modified = typeof json?.date_modified_gmt === 'string' ? json.date_modified_gmt : null;
  if (d.recurso === 'pedido') {
    // Only the same content is the same delivery: `date_modified_gmt` has one-second resolution, and
    // a cancellation or a payment saved within the second of the order's creation carries the same.
    return {
      kind: 'entrega',
      tema: topic,
      clave: id ? `pedido:${id}:${bodyHash}` : bodyHash,
      referencia: id ? platformOrderReference('woocommerce', id) : null,
    };
  }
  const deleted = topic === 'product.deleted' || (json !== undefined && Object.keys(json).length === 1 && id !== null);
  // A deletion carries only the id; the same product can be deleted again after a restore, and a
  // repeated deletion is harmless, so its delivery id is part of the key.
  const deliveryId = d.headers['x-wc-webhook-delivery-id']?.trim() ?? '';
  const clave = id && deleted ? `producto-eliminado:${id}:${deliveryId}` : id && modified ? `producto:${id}:${modified}` : bodyHash;
  return { kind: 'entrega', tema: topic, clave, referencia: id ? `woo-producto-${id}` : null };
}
