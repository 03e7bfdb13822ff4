import { Decimal, cents, platformOrderReference, sum, toCents, type Plataforma } from '@erp/contracts';
import { idText, text } from './json';
import { parseAmount, quantityText, unitPriceAndDiscount } from './money';

/** What a platform order asks of us. */
export type AccionPedido = 'completar' | 'pendiente' | 'anular' | 'ninguna';

/** A line of goods or services the shop sold. Amounts are exact decimals to four places (see `money.ts`). */
export interface ProductoLine {
  /** The platform's id of the line (refunds name it). */
  id_linea: string | null;
  /** Variation (WooCommerce) or variant (Shopify) id; null for a product without variants. */
  id_variante: string | null;
  id_producto_externo: string | null;
  sku: string | null;
  nombre: string;
  cantidad: Decimal;
  /** What the customer was charged for the whole line: tax included, after the line's own discounts. */
  cargo: Decimal;
}

/** Shipping or a fee: sold as the integration's service product, never stock. A negative fee is a discount. */
export interface ChargeLine {
  tipo: 'envio' | 'cargo';
  nombre: string;
  cargo: Decimal;
}

export interface RefundLine {
  id_linea: string;
  cantidad: Decimal;
  /** Whether the shop put the units back in stock. */
  reponer: boolean;
}

/** A refund of part of an order; `lineas` is empty when the platform sends only the amount. */
export interface ReembolsoIntent {
  id: string;
  monto: Decimal;
  lineas: RefundLine[];
}

export interface PedidoIntent {
  referencia: string;
  accion: AccionPedido;
  estado_plataforma: string;
  /** When the platform last changed the order (orders deliveries by it); null when not sent. */
  version: Date | null;
  fecha: string;
  cliente: { email: string | null; nombre: string | null };
  forma_pago: string | null;
  /** What the platform says the customer was charged, the authority for the sale's total. */
  total: Decimal | null;
  productos: ProductoLine[];
  cargos: ChargeLine[];
  /** Order-level discount that the platform did not allocate to any line. */
  descuento: Decimal;
  reembolsos: ReembolsoIntent[];
}

export class UnprocessablePedido extends Error {
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

/** Shopify restock types that put the units back (`no_restock` does not). */
const SHOPIFY_RESTOCKS = new Set(['return', 'cancel', 'legacy_restock']);

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const amount = (v: unknown): Decimal => parseAmount(v) ?? new Decimal(0);
const sumOf = (items: Obj[], field: string): Decimal => sum(items.map((i) => amount(i[field])));
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

function quantityOf(value: unknown, nombre: string): Decimal {
  const qty = parseAmount(value);
  if (qty === null || qty.lte(0)) throw new UnprocessablePedido(`La línea "${nombre}" no tiene una cantidad válida`);
  return qty;
}

/**
 * A WooCommerce order (REST API v3 shape, as its webhooks send it). Line, shipping and fee
 * `total`s are after coupons and before tax in both tax modes (`prices_include_tax` only changes
 * how the shop displayed them), so each charge is `total + total_tax`.
 */
export function wooPedidoIntent(payload: unknown): PedidoIntent {
  const o = obj(payload);
  const id = idText(o.id);
  if (!id) throw new UnprocessablePedido('El pedido no trae id');
  const status = text(o.status) ?? '';
  const billing = obj(o.billing);
  return {
    referencia: platformOrderReference('woocommerce', id),
    accion: WOO_ACTIONS[status] ?? 'ninguna',
    estado_plataforma: status,
    version: timestamp(o.date_modified_gmt, true) ?? timestamp(o.date_modified, false),
    fecha: dateOf(o.date_created),
    cliente: { email: text(billing.email)?.toLowerCase() ?? null, nombre: fullName(billing.first_name, billing.last_name) },
    forma_pago: (text(o.payment_method_title) ?? text(o.payment_method))?.slice(0, 100) ?? null,
    total: parseAmount(o.total),
    productos: list(o.line_items).map((li) => {
      const nombre = text(li.name) ?? 'Producto';
      return {
        id_linea: idText(li.id),
        id_variante: idText(li.variation_id),
        id_producto_externo: idText(li.product_id),
        sku: text(li.sku),
        nombre,
        cantidad: quantityOf(li.quantity, nombre),
        cargo: amount(li.total).plus(amount(li.total_tax)),
      };
    }),
    cargos: [
      ...list(o.shipping_lines).map((s) => ({
        tipo: 'envio' as const,
        nombre: text(s.method_title) ?? 'Envío',
        cargo: amount(s.total).plus(amount(s.total_tax)),
      })),
      ...list(o.fee_lines).map((f) => ({
        tipo: 'cargo' as const,
        nombre: text(f.name) ?? 'Cargo',
        cargo: amount(f.total).plus(amount(f.total_tax)),
      })),
    ],
    // Coupons are already inside the line totals.
    descuento: new Decimal(0),
    reembolsos: list(o.refunds).flatMap((r): ReembolsoIntent[] => {
      const refundId = idText(r.id);
      if (!refundId) return [];
      // The order carries each refund's amount, negative; the refund resource also carries its lines
      // (negative quantities, `_refunded_item_id` naming the order's line). WooCommerce leaves the
      // restock to the shop, and the quantities it refunded are the ones it restocks.
      const lineas = list(r.line_items).flatMap((li): RefundLine[] => {
        const refunded = list(li.meta_data).find((m) => m.key === '_refunded_item_id');
        const idLinea = idText(refunded?.value) ?? idText(li.refunded_item_id);
        const cantidad = amount(li.quantity);
        return idLinea && !cantidad.isZero() ? [{ id_linea: idLinea, cantidad: cantidad.abs(), reponer: true }] : [];
      });
      const monto = amount(r.total).isZero() ? amount(r.amount) : amount(r.total);
      return [{ id: refundId, monto: monto.abs(), lineas }];
    }),
  };
}

/** One Shopify refund (the body of `refunds/create`, or an entry of an order's `refunds`). */
export function shopifyReembolsoIntent(refund: unknown): ReembolsoIntent | null {
  const r = obj(refund);
  const id = idText(r.id);
  if (!id) return null;
  const transactions = list(r.transactions).filter(
    (t) => text(t.kind) === 'refund' && text(t.status) !== 'failure' && text(t.status) !== 'error',
  );
  return {
    id,
    monto: sumOf(transactions, 'amount'),
    lineas: list(r.refund_line_items).flatMap((rl): RefundLine[] => {
      const idLinea = idText(rl.line_item_id) ?? idText(obj(rl.line_item).id);
      const cantidad = amount(rl.quantity);
      return idLinea && cantidad.gt(0) ? [{ id_linea: idLinea, cantidad, reponer: SHOPIFY_RESTOCKS.has(text(rl.restock_type) ?? '') }] : [];
    }),
  };
}

/**
 * A Shopify order (Admin REST shape, as its order webhooks send it). A line's charge is its price
 * times its quantity less its discount allocations, plus its tax lines when the shop's prices
 * exclude tax (`taxes_included` false); shipping lines likewise. What `total_discounts` holds
 * beyond the allocated discounts is an order-level discount.
 */
export function shopifyPedidoIntent(payload: unknown): PedidoIntent {
  const o = obj(payload);
  const id = idText(o.id);
  if (!id) throw new UnprocessablePedido('El pedido no trae id');
  const financial = text(o.financial_status) ?? '';
  const customer = obj(o.customer);
  const billing = obj(o.billing_address);
  const taxesIncluded = o.taxes_included === true;
  const gateways = Array.isArray(o.payment_gateway_names) ? o.payment_gateway_names : [];
  const taxOf = (item: Obj) => (taxesIncluded ? new Decimal(0) : sumOf(list(item.tax_lines), 'price'));
  const allocated = (item: Obj) => sumOf(list(item.discount_allocations), 'amount');
  const lineItems = list(o.line_items);
  const shippingLines = list(o.shipping_lines);
  const lineDiscount = (li: Obj) => (list(li.discount_allocations).length > 0 ? allocated(li) : amount(li.total_discount));
  const unallocated = amount(o.total_discounts)
    .minus(sum(lineItems.map(lineDiscount)))
    .minus(sum(shippingLines.map(allocated)));
  return {
    referencia: platformOrderReference('shopify', id),
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
    total: parseAmount(o.total_price),
    productos: lineItems.map((li) => {
      const nombre = text(li.title) ?? text(li.name) ?? 'Producto';
      const cantidad = quantityOf(li.quantity, nombre);
      return {
        id_linea: idText(li.id),
        id_variante: idText(li.variant_id),
        id_producto_externo: idText(li.product_id),
        sku: text(li.sku),
        nombre,
        cantidad,
        cargo: amount(li.price).times(cantidad).toDecimalPlaces(4, Decimal.ROUND_DOWN).minus(lineDiscount(li)).plus(taxOf(li)),
      };
    }),
    cargos: shippingLines.map((sl) => ({
      tipo: 'envio' as const,
      nombre: text(sl.title) ?? 'Envío',
      cargo: amount(sl.price).minus(allocated(sl)).plus(taxOf(sl)),
    })),
    descuento: unallocated.gt(0) ? unallocated : new Decimal(0),
    reembolsos: list(o.refunds).flatMap((r) => {
      const refund = shopifyReembolsoIntent(r);
      return refund ? [refund] : [];
    }),
  };
}

export function pedidoIntent(plataforma: Plataforma, payload: unknown): PedidoIntent {
  return plataforma === 'woocommerce' ? wooPedidoIntent(payload) : shopifyPedidoIntent(payload);
}

/** A line of the sale to create: a product line of the order (by its index) or the service product. */
export interface PlannedLine {
  origen: { producto: number } | { servicio: string };
  cantidad: string;
  /** Unit price including tax, and a discount, so that cantidad × precio − descuento is the line's charge. */
  precio: string;
  descuento: string;
}

export interface VentaPlan {
  lineas: PlannedLine[];
  total: string;
  /** What the sale's `observaciones` must say about how the platform's amounts were booked. */
  notas: string[];
}

/**
 * The sale lines that reproduce what the customer was charged. Product lines, shipping and fees
 * at their charges (to the cent); negative fees and the unallocated order discount spread over
 * the lines in proportion to their charges, to the cent. The platform's total is the authority:
 * when the parts add up to more, the difference is one more discount spread the same way; when
 * to less, a charge line of the service product makes it up; both are noted. An order whose total
 * is negative, or a line charged a negative amount, cannot be a sale.
 */
export function planPedidoVenta(intent: PedidoIntent): VentaPlan {
  const notas: string[] = [];
  const lines: Array<{ origen: PlannedLine['origen']; cantidad: Decimal; cargo: Decimal }> = [];
  for (const [i, p] of intent.productos.entries()) {
    const cargo = toCents(p.cargo);
    if (cargo.lt(0)) throw new UnprocessablePedido(`La línea "${p.nombre}" tiene un importe negativo (${cents(cargo)})`);
    lines.push({ origen: { producto: i }, cantidad: p.cantidad, cargo });
  }
  let descuento = toCents(intent.descuento);
  for (const c of intent.cargos) {
    const cargo = toCents(c.cargo);
    if (cargo.gt(0)) lines.push({ origen: { servicio: c.nombre }, cantidad: new Decimal(1), cargo });
    else if (cargo.lt(0)) {
      descuento = descuento.minus(cargo);
      notas.push(`${c.nombre} (${cents(cargo)}) repartido como descuento entre las líneas`);
    }
  }
  if (intent.descuento.gt(0)) notas.push(`Descuento del pedido de ${cents(intent.descuento)} repartido entre las líneas`);
  const partes = sum(lines.map((l) => l.cargo)).minus(descuento);
  if (intent.total !== null) {
    const total = toCents(intent.total);
    if (total.lt(0)) throw new UnprocessablePedido(`El total del pedido es negativo (${cents(total)})`);
    if (partes.gt(total)) {
      descuento = descuento.plus(partes.minus(total));
      notas.push(
        `Las partes del pedido suman ${cents(partes)} y su total es ${cents(total)}: la diferencia de ${cents(partes.minus(total))} se registra como descuento`,
      );
    } else if (partes.lt(total)) {
      lines.push({ origen: { servicio: 'Ajuste al total del pedido' }, cantidad: new Decimal(1), cargo: total.minus(partes) });
      notas.push(
        `Las partes del pedido suman ${cents(partes)} y su total es ${cents(total)}: la diferencia de ${cents(total.minus(partes))} se registra como cargo`,
      );
    }
  }
  const bruto = sum(lines.map((l) => l.cargo));
  if (descuento.gt(bruto)) {
    throw new UnprocessablePedido(`Los descuentos del pedido (${cents(descuento)}) superan la suma de sus líneas (${cents(bruto)})`);
  }
  const shares = spread(
    descuento,
    lines.map((l) => l.cargo),
  );
  const lineas = lines.map((l, i) => {
    const { precio, descuento: d } = unitPriceAndDiscount(l.cargo.minus(shares[i]!), l.cantidad);
    return { origen: l.origen, cantidad: quantityText(l.cantidad), precio, descuento: d };
  });
  return { lineas, total: cents(bruto.minus(descuento)), notas };
}

/**
 * Splits `amount` (whole cents) over `weights` in proportion, to the cent, by largest remainder:
 * the shares add up to `amount` exactly and none exceeds its weight.
 */
export function spread(amount: Decimal, weights: Decimal[]): Decimal[] {
  const centsOf = (v: Decimal) => v.times(100);
  const total = sum(weights.map(centsOf));
  if (amount.isZero() || total.isZero()) return weights.map(() => new Decimal(0));
  const reparto = centsOf(amount);
  const exact = weights.map((w) => centsOf(w).times(reparto));
  const shares = exact.map((e) => e.divToInt(total));
  let left = reparto.minus(sum(shares));
  const order = exact
    .map((e, i) => ({ i, rest: e.mod(total) }))
    .sort((a, b) => (a.rest.eq(b.rest) ? a.i - b.i : b.rest.comparedTo(a.rest)));
  for (const { i } of order) {
    if (left.isZero()) break;
    if (shares[i]!.plus(1).lte(centsOf(weights[i]!))) {
      shares[i] = shares[i]!.plus(1);
      left = left.minus(1);
    }
  }
  return shares.map((s) => s.div(100));
}

export interface KnownPedido {
  version: Date | null;
  id_venta: number | null;
  cancelado: boolean;
}

export type PedidoDecision =
  | { kind: 'ignorar'; motivo: string }
  | { kind: 'crear'; estado: 'Completada' | 'Pendiente' }
  | { kind: 'ya-creada'; id_venta: number }
  /** The order is paid now: its sale, if still Pendiente, becomes Completada (its stock is already taken). */
  | { kind: 'completar'; id_venta: number }
  | { kind: 'anular' };

/**
 * What to do with an order given what we already applied of it. A cancellation is terminal, so
 * a late or repeated delivery never brings the order back; a delivery older than the newest one
 * applied changes nothing. Deliveries with the same modification time all apply, in the order
 * they are processed: a terminal state among them therefore wins whichever comes first.
 */
export function decidePedido(
  intent: Pick<PedidoIntent, 'accion' | 'estado_plataforma' | 'version'>,
  known: KnownPedido | undefined,
): PedidoDecision {
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
