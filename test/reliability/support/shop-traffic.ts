import { Random } from '@erp/testing';
import type { ShopifyShop, WooShop } from '../../support/shops';
import { fromCents, sumCents, toCents } from '../../support/shops/money';
import { sleep } from './wait';

export type ShopPlatform = 'woocommerce' | 'shopify';

/** What the shops sell: codes double as SKUs, prices with cents so a total off by one shows. */
export const SHOP_PRODUCTS = [
  { ref: 'audifonos', codigo: 'AUD-07', nombre: 'Audífonos', precio: '129.99' },
  { ref: 'teclado', codigo: 'TEC-11', nombre: 'Teclado', precio: '45.50' },
  { ref: 'mouse', codigo: 'MOU-21', nombre: 'Mouse inalámbrico', precio: '19.95' },
  { ref: 'cable', codigo: 'CAB-31', nombre: 'Cable USB-C', precio: '8.35' },
  { ref: 'funda', codigo: 'FUN-41', nombre: 'Funda', precio: '0.99' },
] as const;

/** Opening stock of each product, ours and each shop's alike. */
export const SHOP_STOCK = 10_000;

export interface ShopRefundRecord {
  /** The platform's refund id: our return's reference is `<order reference>-reembolso-<id>`. */
  id: string;
  amount: string;
  lines: Array<{ sku: string; quantity: number }>;
}

/** One order a shop took during the phase, and what happened to it there. */
export interface ShopOrderRecord {
  platform: ShopPlatform;
  /** The shop's own id. */
  id: number;
  /** Our sale's `referencia_externa`: `woo-<id>` or `shop-<id>`. */
  referencia: string;
  lines: Array<{ sku: string; quantity: number; price: string; refunded: number }>;
  shipping: string | null;
  cancelled: boolean;
  refunds: ShopRefundRecord[];
  /** Epoch ms of its last change in the shop. */
  changedAt: number;
}

/**
 * Customers and shop staff at two shops: orders of a few lines (some with shipping), partial
 * refunds with lines (restocked) and cancellations, each shop at its own steady pace. An order
 * is refunded or cancelled at least 2 s after its last change: both platforms keep an order's
 * modification time to the second, and two changes within one second carry the same version.
 * A refund leaves at least one unit unrefunded, and a refunded order is never cancelled, so
 * each order's sale has one expected end: `Anulada` or not, with one return per refund.
 */
export class ShopTraffic {
  readonly orders: ShopOrderRecord[] = [];
  readonly counts = { orders: 0, refunds: 0, cancellations: 0 };
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly random: Random;

  constructor(
    private readonly shops: { woo: WooShop; shopify: ShopifyShop },
    private readonly options: { seed: number; everyMs: number },
  ) {
    this.random = new Random(options.seed);
  }

  /** The shops' catalogue: each product with our stock, so a stock comparison starts from equal. */
  static stock(shops: { woo: WooShop; shopify: ShopifyShop }): void {
    for (const p of SHOP_PRODUCTS) {
      shops.woo.addProduct({ sku: p.codigo, name: p.nombre, price: p.precio, stock: SHOP_STOCK });
      shops.shopify.addVariant({ sku: p.codigo, title: p.nombre, price: p.precio, stock: SHOP_STOCK });
    }
  }

  start(): void {
    this.running = true;
    this.loops = (['woocommerce', 'shopify'] as const).map((platform) => this.loop(platform, this.random.fork(platform)));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(platform: ShopPlatform, random: Random): Promise<void> {
    while (this.running) {
      this.act(platform, random);
      await sleep(this.options.everyMs * (0.5 + random.next()));
    }
  }

  private act(platform: ShopPlatform, random: Random): void {
    const quiet = Date.now() - 2_000;
    const mine = this.orders.filter((o) => o.platform === platform && !o.cancelled && o.changedAt <= quiet);
    const draw = random.next();
    const refundable = mine.filter((o) => unrefunded(o) >= 2);
    const cancellable = mine.filter((o) => o.refunds.length === 0);
    if (draw < 0.15 && refundable.length > 0) this.refund(random.pick(refundable), random);
    else if (draw < 0.23 && cancellable.length > 0) this.cancel(random.pick(cancellable));
    else this.create(platform, random);
  }

  private create(platform: ShopPlatform, random: Random): void {
    const products = [...SHOP_PRODUCTS].sort(() => random.next() - 0.5).slice(0, random.int(1, 4));
    const lines = products.map((p) => ({ sku: p.codigo, quantity: random.int(1, 3), price: p.precio, refunded: 0 }));
    const shipping = random.chance(0.4) ? random.pick(['4.90', '7.25', '12.00']) : null;
    const spec = { lines: lines.map((l) => ({ sku: l.sku, quantity: l.quantity, price: l.price })), ...(shipping ? { shipping } : {}) };
    const created = platform === 'woocommerce' ? this.shops.woo.createOrder(spec) : this.shops.shopify.createOrder(spec);
    const id = Number(created.id);
    this.orders.push({
      platform,
      id,
      referencia: `${platform === 'woocommerce' ? 'woo' : 'shop'}-${id}`,
      lines,
      shipping,
      cancelled: false,
      refunds: [],
      changedAt: Date.now(),
    });
    this.counts.orders++;
  }

  private refund(order: ShopOrderRecord, random: Random): void {
    let left = unrefunded(order) - 1;
    const lines: Array<{ sku: string; quantity: number }> = [];
    for (const line of [...order.lines].sort(() => random.next() - 0.5)) {
      const quantity = Math.min(line.quantity - line.refunded, left, random.int(1, 2));
      if (quantity <= 0 || (lines.length > 0 && random.chance(0.5))) continue;
      lines.push({ sku: line.sku, quantity });
      line.refunded += quantity;
      left -= quantity;
    }
    const amount = fromCents(sumCents(lines.map((l) => fromCents(toCents(order.lines.find((o) => o.sku === l.sku)!.price) * l.quantity))));
    const refund =
      order.platform === 'woocommerce'
        ? this.shops.woo.refundOrder(order.id, { lines })
        : this.shops.shopify.refundOrder(order.id, { lines: lines.map((l) => ({ ...l, restockType: 'return' as const })) });
    order.refunds.push({ id: String(refund.id), amount, lines });
    order.changedAt = Date.now();
    this.counts.refunds++;
  }

  private cancel(order: ShopOrderRecord): void {
    if (order.platform === 'woocommerce') this.shops.woo.cancelOrder(order.id);
    else this.shops.shopify.cancelOrder(order.id);
    order.cancelled = true;
    order.changedAt = Date.now();
    this.counts.cancellations++;
  }
}

const unrefunded = (o: ShopOrderRecord) => o.lines.reduce((s, l) => s + l.quantity - l.refunded, 0);
