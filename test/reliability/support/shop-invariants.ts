import { SchemaClients, type DatabaseUrls, type InvariantResult, type Query } from '@erp/back-office';
import type { ShopifyShop, WooShop } from '../../support/shops';
import type { Deriva } from '@erp/contracts';
import { SHOP_PRODUCTS, type ShopOrderRecord, type ShopPlatform } from './shop-traffic';

/** One reconciliation pass as seen in `webhook_ingest.conciliaciones` (its outcome once it finished). */
export interface PassSeen {
  platform: ShopPlatform;
  at: Date;
  resultado: string | null;
  error: string | null;
}

/** What the at-rest checks of the shops phase read: the shops themselves, what they were asked to do, our databases. */
export interface ShopRestInput {
  databases: DatabaseUrls;
  empresaId: number;
  shops: { woo: WooShop; shopify: ShopifyShop };
  orders: ShopOrderRecord[];
  /** Where each shop must deliver our webhooks (the gateway's URL and the integration's path). */
  webhookUrls: Record<ShopPlatform, string>;
  passes: PassSeen[];
  /** The drift check (`npm run admin -- drift`) of every integration, without repair. */
  drift: () => Promise<Deriva[]>;
}

type ShopCheck = { name: string; run: (input: ShopRestInput, q: Query) => Promise<{ checked: number; violations: string[] }> };

/** Woo's topics and Shopify's our integrations subscribe to. */
const WOO_TOPICS = ['order.created', 'order.updated'];
const SHOPIFY_TOPICS = ['ORDERS_CREATE', 'ORDERS_UPDATED', 'REFUNDS_CREATE'];

/** A numeric's text in cents, when it is to the cent ("64.22", "64.2200"); null otherwise. */
function cents(text: string): number | null {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return null;
  const frac = (m[3] ?? '').padEnd(2, '0');
  if (/[^0]/.test(frac.slice(2))) return null;
  const value = Number(m[2]) * 100 + Number(frac.slice(0, 2));
  return m[1] ? -value : value;
}

/** The order's total as the shop answers for it now. */
function shopTotal(shops: ShopRestInput['shops'], o: ShopOrderRecord): string {
  return o.platform === 'woocommerce' ? String(shops.woo.orderJson(o.id).total) : String(shops.shopify.orderJson(o.id).total_price);
}

/**
 * The shops phase's checks at rest, each on its own (one failing to run does not hide the others).
 * Another comparison with the shops (each mapped product's stock there against ours) goes beside them.
 */
export const SHOP_CHECKS: ShopCheck[] = [
  {
    name: 'every shop order is exactly one sale, its total the shop’s to the cent, the cancelled ones Anulada (or none: cancelled before we saw it)',
    run: async ({ empresaId, shops, orders }, q) => {
      const rows = await q(
        `select referencia_externa, estado, total::text as total from sales.ventas where empresa_id = $1 and referencia_externa = any($2)`,
        [empresaId, orders.map((o) => o.referencia)],
      );
      // An order first seen already cancelled makes no sale (webhook-ingest ignores it, and records it cancelled).
      const unsold = new Set(
        (
          await q(`select referencia from webhook_ingest.pedidos where empresa_id = $1 and cancelado and id_venta is null`, [empresaId])
        ).map((r) => r.referencia as string),
      );
      const violations: string[] = [];
      for (const o of orders) {
        const mine = rows.filter((r) => r.referencia_externa === o.referencia);
        if (mine.length === 0 && o.cancelled && unsold.has(o.referencia)) continue;
        if (mine.length !== 1) {
          violations.push(`${o.referencia}: ${mine.length} sales`);
          continue;
        }
        const sale = mine[0]!;
        const total = shopTotal(shops, o);
        if (cents(sale.total) !== cents(total)) violations.push(`${o.referencia}: sale total ${sale.total}, the shop's ${total}`);
        if ((sale.estado === 'Anulada') !== o.cancelled)
          violations.push(`${o.referencia}: sale ${sale.estado}, the order ${o.cancelled ? 'cancelled' : 'not cancelled'}`);
      }
      return { checked: orders.length, violations };
    },
  },
  {
    name: 'every shop refund is one return of its order’s sale, for the amount refunded; no other return',
    run: async ({ empresaId, orders }, q) => {
      const sales = new Map(
        (await q(`select referencia_externa, id from sales.ventas where empresa_id = $1`, [empresaId])).map((r) => [
          r.referencia_externa as string,
          Number(r.id),
        ]),
      );
      const returns = await q(`select referencia, venta_id, tipo, total::text as total from returns.devoluciones where empresa_id = $1`, [
        empresaId,
      ]);
      const violations: string[] = [];
      const expected = new Set<string>();
      let checked = 0;
      for (const o of orders) {
        for (const r of o.refunds) {
          checked++;
          const referencia = `${o.referencia}-reembolso-${r.id}`;
          expected.add(referencia);
          const mine = returns.filter((row) => row.referencia === referencia);
          if (mine.length !== 1) {
            // What our inbox made of the refund, in the words of its deliveries.
            const said = await q(
              `select origen, tema, motivo from webhook_ingest.entregas where empresa_id = $1 and referencia = $2 and motivo like $3 order by id`,
              [empresaId, o.referencia, `%Reembolso ${r.id} %`],
            );
            violations.push(
              `${referencia} (${r.amount}, ${JSON.stringify(r.lines)}): ${mine.length} returns; ` +
                (said.length > 0 ? said.map((d) => `${d.origen} ${d.tema}: "${d.motivo}"`).join('; ') : 'no delivery names the refund'),
            );
            continue;
          }
          const row = mine[0]!;
          if (cents(row.total) !== cents(r.amount)) violations.push(`${referencia}: return total ${row.total}, refunded ${r.amount}`);
          if (Number(row.venta_id) !== sales.get(o.referencia))
            violations.push(`${referencia}: return of sale ${row.venta_id}, the order's sale is ${sales.get(o.referencia)}`);
        }
      }
      for (const row of returns)
        if (!expected.has(row.referencia)) violations.push(`return ${row.referencia} (${row.tipo}, ${row.total}) answers no refund`);
      return { checked: checked + returns.length, violations };
    },
  },
  {
    name: 'no shop order twice: every referencia_externa of the shops’ company once, each from an order',
    run: async ({ empresaId, orders }, q) => {
      // The partner's own sales carry no platform reference.
      const rows = await q(
        `select referencia_externa, count(*)::int as n from sales.ventas where empresa_id = $1 and referencia_externa is not null group by 1`,
        [empresaId],
      );
      const known = new Set(orders.map((o) => o.referencia));
      const violations: string[] = [];
      for (const r of rows) {
        if (r.n !== 1) violations.push(`${r.referencia_externa}: ${r.n} sales`);
        if (!known.has(r.referencia_externa)) violations.push(`${r.referencia_externa}: a sale of no order the shops took`);
      }
      return { checked: rows.length, violations };
    },
  },
  {
    name: 'every product’s stock at each shop is ours (whole units, never below 0): the push took every change',
    run: async ({ empresaId, shops }, q) => {
      const rows = await q(
        `select p.codigo, i.stock::text as stock from inventory.inventarios i join inventory.productos p on p.id = i.producto_id
         where p.empresa_id = $1 and p.codigo = any($2)`,
        [empresaId, SHOP_PRODUCTS.map((p) => p.codigo)],
      );
      const ours = new Map(rows.map((r) => [String(r.codigo), Math.max(0, Math.floor(Number(r.stock)))]));
      const violations: string[] = [];
      for (const { codigo } of SHOP_PRODUCTS) {
        const want = ours.get(codigo);
        const woo = shops.woo.stockOf(codigo);
        const shopify = shops.shopify.stockOf(codigo);
        if (woo !== want) violations.push(`${codigo}: WooCommerce shows ${woo}, ours is ${want}`);
        if (shopify !== want) violations.push(`${codigo}: Shopify shows ${shopify}, ours is ${want}`);
      }
      return { checked: 2 * SHOP_PRODUCTS.length, violations };
    },
  },
  {
    name: 'the drift check (admin drift, no repair) finds no difference at either shop',
    run: async ({ drift }) => {
      const found = await drift();
      const violations = found.flatMap((d) => [
        ...(d.resultado !== 'revisada' ? [`integration ${d.id_integracion}: ${d.resultado} ${d.error ?? ''}`] : []),
        ...d.stock_distinto.map((x) => `integration ${d.id_integracion}: ${x.codigo} at ${x.tienda}, ours ${x.esperado}`),
        ...d.pedidos_pendientes.map((r) => `integration ${d.id_integracion}: order ${r} not held at its version`),
      ]);
      return { checked: found.reduce((n, d) => n + d.productos_revisados + d.pedidos_revisados, 0), violations };
    },
  },
  {
    name: 'our webhook subscriptions active again at both shops, once per topic',
    run: async ({ shops, webhookUrls }) => ({
      checked: WOO_TOPICS.length + SHOPIFY_TOPICS.length,
      violations: subscriptionProblems(shops, webhookUrls),
    }),
  },
  {
    name: 'no rate-limit breach: no pass failed for a shop’s rate limit (THROTTLED and 429 waited out)',
    run: async ({ passes }) => {
      const breaches = passes.filter((p) => p.resultado === 'fallida' && /throttl|429|rate limit|too many/i.test(p.error ?? ''));
      return {
        checked: passes.length,
        violations: breaches.map((p) => `${p.platform} pass of ${p.at.toISOString()} failed: ${p.error}`),
      };
    },
  },
];

/** What keeps our subscriptions from being as they should: one active webhook of each topic to our URL at each shop. */
export function subscriptionProblems(shops: ShopRestInput['shops'], webhookUrls: ShopRestInput['webhookUrls']): string[] {
  const problems: string[] = [];
  const woo = [...shops.woo.webhooks.values()].filter((w) => w.delivery_url === webhookUrls.woocommerce && w.status === 'active');
  for (const topic of WOO_TOPICS) {
    const n = woo.filter((w) => w.topic === topic).length;
    if (n !== 1) problems.push(`WooCommerce ${topic}: ${n} active webhooks to ${webhookUrls.woocommerce}`);
  }
  const shopify = [...shops.shopify.subscriptions.values()].filter((s) => s.uri === webhookUrls.shopify);
  for (const topic of SHOPIFY_TOPICS) {
    const n = shopify.filter((s) => s.topic === topic).length;
    if (n !== 1) problems.push(`Shopify ${topic}: ${n} subscriptions to ${webhookUrls.shopify}`);
  }
  return problems;
}

/** Runs every check of SHOP_CHECKS once. */
export async function checkShops(input: ShopRestInput): Promise<InvariantResult[]> {
  const clients = await SchemaClients.connect(input.databases);
  const results: InvariantResult[] = [];
  try {
    for (const check of SHOP_CHECKS) {
      const started = Date.now();
      try {
        results.push({ name: check.name, ...(await check.run(input, clients.q)), ms: Date.now() - started });
      } catch (err) {
        results.push({ name: check.name, checked: 0, violations: [`check failed to run: ${(err as Error).message}`] });
      }
    }
  } finally {
    await clients.end();
  }
  return results;
}
