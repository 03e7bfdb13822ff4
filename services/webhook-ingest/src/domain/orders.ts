import type { Plataforma } from '@erp/contracts';
import { idText, text } from './json';
import { fromUnits, toUnits, unitPriceAndDiscount } from './money';

/** What a platform order asks of us. */
export type AccionPedido = 'completar' | 'pendiente' | 'anular' | 'ninguna';

export interface OrderLine {
  /** Platform ids to look up in the stored mappings, most specific first (variant, then product). */
  ids_externos: string[];
  sku: string | null;
  nombre: string;
  cantidad: string;
  /** Unit price including tax, and a discount, so that cantidad × precio − descuento is the line's charge. */
  precio: string;
  descuento: string;
}

export interface OrderIntent {
  referencia: string;
  accion: AccionPedido;
  estado_plataforma: string;
  /** When the platform last changed the order (orders deliveries by it); null when not sent. */
  version: Date | null;
  fecha: string;
  cliente: { email: string | null; nombre: string | null };
  forma_pago: string | null;
  total: string | null;
  lineas: OrderLine[];
}

export class UnprocessableOrder extends Error {
  override readonly name = 'UnprocessableOrder';
}

const WOO_ACTIONS: Record<string, AccionPedido> = {
  processing: 'completar',
  completed: 'completar',
  pending: 'pendiente',
  'on-hold': 'pendiente',
  cancelled: 'anular',
  refunded: 'anular',
  failed: 'anular',
};

const SHOPIFY_ACTIONS: Record<string, AccionPedido> = {
  paid: 'completar',
  partially_refunded: 'completar',
  pending: 'pendiente',
  authorized: 'pendiente',
  partially_paid: 'pendiente',
  refunded: 'anular',
  voided: 'anular',
};

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const dateOf = (v: unknown): string => {
  const t = text(v);
  return t && /^\d{4}-\d{2}-\d{2}/.test(t) ? t.slice(0, 10) : new Date().toISOString().slice(0, 10);
};
const timestamp = (v: unknown, assumeUtc: boolean): Date | null => {
  const t = text(v);
  if (!t) return null;
  const d = new Date(assumeUtc && !/[zZ]|[+-]\d{2}:?\d{2}$/.test(t) ? `${t}Z` : t);
  return Number.isNaN(d.getTime()) ? null : d;
};
const fullName = (first: unknown, last: unknown): string | null => [text(first), text(last)].filter(Boolean).join(' ') || null;

function lineOf(ids: Array<string | null>, sku: unknown, nombre: unknown, quantity: unknown, charge: bigint): OrderLine {
  const qty = toUnits(quantity);
  if (qty === null || qty <= 0n) throw new UnprocessableOrder(`La línea "${text(nombre) ?? '?'}" no tiene una cantidad válida`);
  const { precio, descuento } = unitPriceAndDiscount(charge < 0n ? 0n : charge, qty);
  return {
    ids_externos: ids.filter((id): id is string => id !== null),
    sku: text(sku),
    nombre: text(nombre) ?? 'Producto',
    cantidad: fromUnits(qty, 4).replace(/\.?0+$/, ''),
    precio,
    descuento,
  };
}

/** A WooCommerce order (REST API v3 shape, as its webhooks send it). */
export function wooOrderIntent(payload: unknown): OrderIntent {
  const o = obj(payload);
  const id = idText(o.id);
  if (!id) throw new UnprocessableOrder('El pedido no trae id');
  const status = text(o.status) ?? '';
  const billing = obj(o.billing);
  const items = Array.isArray(o.line_items) ? o.line_items.map(obj) : [];
  return {
    referencia: `woo-${id}`,
    accion: WOO_ACTIONS[status] ?? 'ninguna',
    estado_plataforma: status,
    version: timestamp(o.date_modified_gmt, true) ?? timestamp(o.date_modified, false),
    fecha: dateOf(o.date_created),
    cliente: { email: text(billing.email)?.toLowerCase() ?? null, nombre: fullName(billing.first_name, billing.last_name) },
    forma_pago: (text(o.payment_method_title) ?? text(o.payment_method))?.slice(0, 100) ?? null,
    total: text(o.total),
    // Line `total` is after discounts and before tax; `total_tax` is the line's tax.
    lineas: items.map((li) =>
      lineOf(
        [idText(li.variation_id), idText(li.product_id)],
        li.sku,
        li.name,
        li.quantity,
        (toUnits(li.total) ?? 0n) + (toUnits(li.total_tax) ?? 0n),
      ),
    ),
  };
}

/** A Shopify order (Admin REST shape, as its order webhooks send it). */
export function shopifyOrderIntent(payload: unknown): OrderIntent {
  const o = obj(payload);
  const id = idText(o.id);
  if (!id) throw new UnprocessableOrder('El pedido no trae id');
  const financial = text(o.financial_status) ?? '';
  const customer = obj(o.customer);
  const billing = obj(o.billing_address);
  const taxesIncluded = o.taxes_included === true;
  const items = Array.isArray(o.line_items) ? o.line_items.map(obj) : [];
  const gateways = Array.isArray(o.payment_gateway_names) ? o.payment_gateway_names : [];
  return {
    referencia: `shop-${id}`,
    // A cancelled order stays `paid` until it is refunded: `cancelled_at` decides first.
    accion: text(o.cancelled_at) ? 'anular' : (SHOPIFY_ACTIONS[financial] ?? 'ninguna'),
    estado_plataforma: text(o.cancelled_at) ? 'cancelled' : financial,
    version: timestamp(o.updated_at, false),
    fecha: dateOf(o.created_at),
    cliente: {
      email: (text(o.email) ?? text(o.contact_email) ?? text(customer.email))?.toLowerCase() ?? null,
      nombre: fullName(customer.first_name, customer.last_name) ?? text(billing.name) ?? fullName(billing.first_name, billing.last_name),
    },
    forma_pago: (text(o.gateway) ?? text(gateways[0]))?.slice(0, 100) ?? null,
    total: text(o.total_price),
    lineas: items.map((li) => {
      const qty = toUnits(li.quantity) ?? 0n;
      const gross = ((toUnits(li.price) ?? 0n) * qty) / 10_000n;
      const allocations = Array.isArray(li.discount_allocations) ? li.discount_allocations.map(obj) : [];
      const discount = allocations.length > 0 ? allocations.reduce((s, a) => s + (toUnits(a.amount) ?? 0n), 0n) : (toUnits(li.total_discount) ?? 0n);
      const taxes = Array.isArray(li.tax_lines) ? li.tax_lines.map(obj).reduce((s, t) => s + (toUnits(t.price) ?? 0n), 0n) : 0n;
      return lineOf([idText(li.variant_id), idText(li.product_id)], li.sku, li.title ?? li.name, li.quantity, gross - discount + (taxesIncluded ? 0n : taxes));
    }),
  };
}

export function orderIntent(plataforma: Plataforma, payload: unknown): OrderIntent {
  return plataforma === 'woocommerce' ? wooOrderIntent(payload) : shopifyOrderIntent(payload);
}

export interface KnownOrder {
  version: Date | null;
  id_venta: number | null;
  cancelado: boolean;
}

export type OrderDecision =
  | { kind: 'ignorar'; motivo: string }
  | { kind: 'crear'; estado: 'Completada' | 'Pendiente' }
  | { kind: 'ya-creada'; id_venta: number }
  /** The order is paid now: its sale, if still Pendiente, becomes Completada (its stock is already taken). */
  | { kind: 'completar'; id_venta: number }
  | { kind: 'anular' };

/**
 * What to do with an order given what we already applied of it. A cancellation is terminal, so
 * a late or repeated delivery never brings the order back; a delivery older than the newest one
 * applied changes nothing.
 */
export function decideOrder(intent: OrderIntent, known: KnownOrder | undefined): OrderDecision {
  if (known?.cancelado) return { kind: 'ignorar', motivo: 'El pedido ya fue cancelado; la entrega no lo reactiva' };
  if (known?.version && intent.version && intent.version.getTime() < known.version.getTime()) {
    return { kind: 'ignorar', motivo: 'Entrega desactualizada: ya se aplicó una versión más reciente del pedido' };
  }
  switch (intent.accion) {
    case 'ninguna':
      return { kind: 'ignorar', motivo: `El estado "${intent.estado_plataforma}" no genera venta` };
    case 'anular':
      return { kind: 'anular' };
    case 'completar':
      if (known?.id_venta) return { kind: 'completar', id_venta: known.id_venta };
      return { kind: 'crear', estado: 'Completada' };
    case 'pendiente':
      if (known?.id_venta) return { kind: 'ya-creada', id_venta: known.id_venta };
      return { kind: 'crear', estado: 'Pendiente' };
  }
}
