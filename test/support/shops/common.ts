import type { SimRequest, SimResponse } from './https';

/** One stock write a shop accepted (or refused), in the order they came. */
export interface StockWrite {
  at: Date;
  platform: 'woocommerce' | 'shopify';
  sku: string | null;
  /** WooCommerce product or variation id; Shopify inventory item GID. */
  target: string;
  /** Shopify location GID; null for WooCommerce. */
  location: string | null;
  before: number | null;
  after: number;
  /** Whether it changed the stock (false: refused, e.g. a stale compare-and-set). */
  applied: boolean;
  /** Shopify's idempotency key; null for WooCommerce. */
  idempotencyKey: string | null;
  /** A repeat answered from the idempotency record without writing again. */
  replayed: boolean;
}

/** What a shop served, for tests and the benchmark's baseline. */
export interface ShopMetrics {
  requests: number;
  /** Requests refused for their credentials. */
  unauthorized: number;
  /** Pages of orders served (WooCommerce list pages, Shopify `orders` connections). */
  orderPages: number;
  ordersServed: number;
  /** Answers refused for the rate limit (Shopify THROTTLED, or an injected 429). */
  throttled: number;
  /** Per route or operation. */
  byRoute: Record<string, number>;
}

export const emptyMetrics = (): ShopMetrics => ({
  requests: 0,
  unauthorized: 0,
  orderPages: 0,
  ordersServed: 0,
  throttled: 0,
  byRoute: {},
});

/** Injected refusals: the next `count` API requests answer `status` (429 with `Retry-After` by default). */
export interface InjectedFailure {
  count: number;
  status?: number;
  retryAfterSeconds?: number;
}

export function injected(failure: InjectedFailure | null, metrics: ShopMetrics): SimResponse | null {
  if (!failure || failure.count <= 0) return null;
  failure.count--;
  const status = failure.status ?? 429;
  if (status === 429) metrics.throttled++;
  return {
    status,
    headers: status === 429 ? { 'Retry-After': String(failure.retryAfterSeconds ?? 1) } : {},
    body: { errors: status === 429 ? 'Exceeded API rate limit' : 'Internal Server Error' },
  };
}

export const count = (metrics: ShopMetrics, route: string) => {
  metrics.byRoute[route] = (metrics.byRoute[route] ?? 0) + 1;
};

export type Handler = (req: SimRequest, params: string[]) => SimResponse | Promise<SimResponse>;

/** A small router: `[method, regexp, name, handler]`, the regexp's groups become params. */
export function route(
  routes: Array<[string, RegExp, string, Handler]>,
  req: SimRequest,
  metrics: ShopMetrics,
): Promise<SimResponse> | SimResponse | null {
  for (const [method, pattern, name, handler] of routes) {
    const m = pattern.exec(req.path);
    if (m && method === req.method) {
      count(metrics, name);
      return handler(req, m.slice(1));
    }
  }
  return null;
}

/** GMT seconds without a zone, as WooCommerce writes `*_gmt` dates: `2026-03-12T16:04:35`. */
export const wooDate = (d: Date) => d.toISOString().slice(0, 19);
