import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import { platformOrderReference } from '@erp/contracts';
import { chunks } from '../../domain/chunks';
import {
  ShopCallError,
  verdictFor,
  withRetries,
  type CallPolicy,
  type TiendaApi,
  type PedidoTienda,
  type ShopProductRef,
  type StockWriteResult,
  type SubscriptionCheck,
} from './shop';

/*
 * WooCommerce REST API v3 (https://woocommerce.github.io/woocommerce-rest-api-docs/): orders
 * listed by modification (`modified_after` is exclusive to the second, so each page resumes one
 * second before the newest modification read and skips what it already handed over), an order's
 * refunds with their lines (`GET /orders/{id}/refunds`), webhooks (status active, paused or
 * disabled). Calls go through WooCommerce's own client, HTTP Basic over HTTPS.
 */

const PER_PAGE = 100;
/** The order topics our endpoint is subscribed to. */
export const WOO_ORDER_TOPICS = ['order.created', 'order.updated'] as const;

type Json = Record<string, unknown>;
interface AxiosLikeError {
  response?: { status: number; headers: Record<string, string | undefined>; data?: unknown };
  message: string;
}

const gmt = (text: unknown): Date | null => {
  if (typeof text !== 'string' || !text) return null;
  const d = new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
};
/** `2026-03-12T10:04:35`: the form WooCommerce's date parameters take (GMT with `dates_are_gmt`). */
const wooTime = (d: Date) => d.toISOString().slice(0, 19);

export function wooShop(shop: { url: string; clave: string; secreto: string }, policy: CallPolicy): TiendaApi {
  const api = new WooCommerceRestApi({
    url: shop.url,
    consumerKey: shop.clave,
    consumerSecret: shop.secreto,
    version: 'wc/v3',
    timeout: policy.timeoutMs,
  });
  const call = <T>(what: string, run: () => Promise<{ data: T; headers: Record<string, string | undefined> }>) =>
    withRetries(
      policy,
      async () => {
        try {
          return await run();
        } catch (err) {
          const e = err as AxiosLikeError;
          const status = e.response?.status ?? null;
          const said = (e.response?.data as Json | undefined)?.message;
          throw Object.assign(new ShopCallError(`WooCommerce ${what}: ${typeof said === 'string' ? said : e.message}`, status), {
            retryAfter: e.response?.headers['retry-after'],
          });
        }
      },
      (err, attempt) => {
        const e = err as ShopCallError & { retryAfter?: string };
        return verdictFor(e.status, e.retryAfter, attempt, policy);
      },
    );

  const withRefundLines = async (order: Json): Promise<Json> => {
    if (!Array.isArray(order.refunds) || order.refunds.length === 0) return order;
    const { data } = await call<Json[]>('refunds', () => api.get(`orders/${String(order.id)}/refunds`, { per_page: PER_PAGE }));
    return { ...order, refunds: data };
  };

  /** Every page of a listing. */
  const all = async (what: string, endpoint: string, params: Record<string, unknown>): Promise<Json[]> => {
    const out: Json[] = [];
    for (let page = 1; ; page++) {
      const { data, headers } = await call<Json[]>(what, () => api.get(endpoint, { ...params, per_page: PER_PAGE, page }));
      out.push(...data);
      if (data.length < PER_PAGE || page >= Number(headers['x-wp-totalpages'] ?? page)) return out;
    }
  };
  return {
    plataforma: 'woocommerce',
    async findProductos(codigos) {
      const found = new Map<string, ShopProductRef | null>(codigos.map((c) => [c, null]));
      // Products by SKU, a hundred SKUs a request; variations are found under their variable products.
      for (const part of chunks(codigos, PER_PAGE)) {
        for (const p of await all('products', 'products', { sku: part.join(',') })) {
          if (typeof p.sku === 'string' && found.has(p.sku)) found.set(p.sku, { id_externo: String(p.id), id_padre: null });
        }
      }
      const missing = codigos.filter((c) => found.get(c) === null);
      if (missing.length > 0) {
        const variable = (await all('products', 'products', {})).filter((p) => p.type === 'variable');
        for (const parent of variable) {
          for (const part of chunks(missing, PER_PAGE)) {
            for (const v of await all('variations', `products/${String(parent.id)}/variations`, { sku: part.join(',') })) {
              if (typeof v.sku === 'string' && found.has(v.sku))
                found.set(v.sku, { id_externo: String(v.id), id_padre: String(parent.id) });
            }
          }
        }
      }
      return found;
    },
    async setStock(items): Promise<StockWriteResult> {
      const result: StockWriteResult = { written: [], failed: [], reread: 0 };
      const byParent = new Map<string, typeof items>();
      for (const item of items) {
        const parent = item.ref.id_padre ?? '';
        byParent.set(parent, [...(byParent.get(parent) ?? []), item]);
      }
      // WooCommerce has no compare-and-set: the quantity is set, a hundred items a request.
      for (const [parent, group] of byParent) {
        const endpoint = parent ? `products/${parent}/variations/batch` : 'products/batch';
        for (const part of chunks(group, PER_PAGE)) {
          const { data } = await call<{ update?: Json[] }>('stock', () =>
            api.post(endpoint, {
              update: part.map((i) => ({ id: Number(i.ref.id_externo), manage_stock: true, stock_quantity: i.cantidad })),
            }),
          );
          const answers = new Map((data.update ?? []).map((u) => [String(u.id), u]));
          for (const item of part) {
            const answer = answers.get(item.ref.id_externo);
            const error = answer?.error as { message?: string } | undefined;
            if (!answer || error)
              result.failed.push({ codigo: item.codigo, error: error?.message ?? 'La tienda no respondió por este producto' });
            else result.written.push({ codigo: item.codigo, cantidad: item.cantidad });
          }
        }
      }
      return result;
    },
    async listStock() {
      const out = new Map<string, { ref: ShopProductRef; cantidad: number | null }>();
      const take = (p: Json, parent: string | null) => {
        if (typeof p.sku !== 'string' || !p.sku) return;
        out.set(p.sku, {
          ref: { id_externo: String(p.id), id_padre: parent },
          cantidad: p.manage_stock === true && typeof p.stock_quantity === 'number' ? p.stock_quantity : null,
        });
      };
      for (const p of await all('products', 'products', {})) {
        if (p.type === 'variable') {
          for (const v of await all('variations', `products/${String(p.id)}/variations`, {})) take(v, String(p.id));
        } else take(p, null);
      }
      return out;
    },
    async pedidosChangedSince(since, pages) {
      let listed = 0;
      let cursor = since;
      let page = 1;
      const handed = new Map<string, number>();
      for (;;) {
        const { data, headers } = await call<Json[]>('orders', () =>
          api.get('orders', {
            modified_after: wooTime(new Date(cursor.getTime() - 1000)),
            dates_are_gmt: true,
            orderby: 'modified',
            order: 'asc',
            per_page: PER_PAGE,
            page,
          }),
        );
        let newest = cursor;
        const listedHere: Array<{ raw: Json; referencia: string; version: Date; estado: string }> = [];
        for (const raw of data) {
          const version = gmt(raw.date_modified_gmt);
          const id = String(raw.id);
          if (!version) continue;
          if (version > newest) newest = version;
          if (handed.get(id) === version.getTime()) continue;
          handed.set(id, version.getTime());
          listedHere.push({ raw, referencia: platformOrderReference('woocommerce', id), version, estado: String(raw.status ?? '') });
        }
        listed += listedHere.length;
        const wanted = listedHere.length > 0 ? await pages.wanted(listedHere) : new Set<string>();
        const fresh: PedidoTienda[] = [];
        for (const { raw, referencia, version } of listedHere) {
          if (!wanted.has(referencia)) continue;
          const order = await withRefundLines(raw);
          fresh.push({ referencia, version, cuerpo: Buffer.from(JSON.stringify(order)), tema: 'order.updated' });
        }
        if (fresh.length > 0) await pages.onPage(fresh);
        // The last page of the listing (WooCommerce answers 400 to a page past it).
        if (data.length < PER_PAGE || page >= Number(headers['x-wp-totalpages'] ?? page)) return listed;
        // A full page whose orders all changed within the cursor's second: the next page of it.
        if (Math.floor(newest.getTime() / 1000) > Math.floor(cursor.getTime() / 1000)) {
          cursor = newest;
          page = 1;
        } else page++;
      }
    },
    async keepSubscriptions(endpoint, secret): Promise<SubscriptionCheck> {
      const hooks: Json[] = [];
      for (let page = 1; ; page++) {
        const { data } = await call<Json[]>('webhooks', () => api.get('webhooks', { per_page: PER_PAGE, page, status: 'all' }));
        hooks.push(...data);
        if (data.length < PER_PAGE) break;
      }
      let restored = false;
      for (const topic of WOO_ORDER_TOPICS) {
        const ours = hooks.filter((h) => h.delivery_url === endpoint && h.topic === topic);
        if (ours.some((h) => h.status === 'active')) continue;
        restored = true;
        const found = ours[0];
        if (found) await call('webhooks', () => api.put(`webhooks/${String(found.id)}`, { status: 'active' }));
        else
          await call('webhooks', () =>
            api.post('webhooks', { name: `ERP ${topic}`, topic, delivery_url: endpoint, status: 'active', ...(secret ? { secret } : {}) }),
          );
      }
      return restored ? 'restaurada' : 'activa';
    },
  };
}
