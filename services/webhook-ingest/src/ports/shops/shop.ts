import { setTimeout as sleep } from 'node:timers/promises';
import type { Plataforma } from '@erp/contracts';

/** An order read from the shop, in the shape its webhooks send, ready for the same intake. */
export interface PedidoTienda extends Omit<PedidoStamp, 'estado'> {
  /** The order as a webhook body would carry it (JSON). */
  cuerpo: Buffer;
  /** The webhook topic it stands for. */
  tema: string;
}

/**
 * An order as the shop's listing names it: which, when it last changed (to the second), and its
 * state as our order's `estado_plataforma` records it (a change within the second shows there).
 */
export interface PedidoStamp {
  referencia: string;
  version: Date;
  estado: string;
}

/** What reconciliation is handed, a page at a time. */
export interface PedidoPages {
  /** Of a page's orders, the ones we do not hold at their version (only those are read whole). */
  wanted(stamps: PedidoStamp[]): Promise<Set<string>>;
  /** The wanted orders of a page, whole. */
  onPage(orders: PedidoTienda[]): Promise<void>;
}

/** What a pass found of our webhook subscriptions at the shop. */
export type SubscriptionCheck = 'activa' | 'restaurada';

/** How the shop names one of our products: its product or variation (and parent) id, or inventory item GID. */
export interface ShopProductRef {
  id_externo: string;
  id_padre: string | null;
}

/** A quantity to set at the shop for one SKU, with what we last read or wrote there (compare-and-set). */
export interface StockWriteItem {
  codigo: string;
  cantidad: number;
  ref: ShopProductRef;
  leido: number | null;
}

/** What a stock write did: the SKUs the shop took (with the quantity it now holds) and those it refused. */
export interface StockWriteResult {
  written: Array<{ codigo: string; cantidad: number }>;
  failed: Array<{ codigo: string; error: string }>;
  /** Shopify: the writes that found the shop's quantity changed and were sent again after a re-read. */
  reread: number;
}

/** The part of a shop's Admin API reconciliation and the stock push use. */
export interface TiendaApi {
  readonly plataforma: Plataforma;
  /** Every order changed at or after `since`, oldest change first, a page at a time; returns how many it listed. */
  pedidosChangedSince(since: Date, pages: PedidoPages): Promise<number>;
  /**
   * Our subscriptions for the order topics at `endpoint`: a disabled one re-activated, a missing
   * one created (signed with `secret` where the shop takes one).
   */
  keepSubscriptions(endpoint: string, secret: string | null): Promise<SubscriptionCheck>;
  /** How the shop names these SKUs; null for one it does not have. */
  findProductos(codigos: readonly string[]): Promise<Map<string, ShopProductRef | null>>;
  /** Sets these quantities (at `ubicacion`, Shopify's location; its only active one when null), in bulk within the platform's limits. */
  setStock(items: readonly StockWriteItem[], ubicacion: string | null, key: string): Promise<StockWriteResult>;
  /** Every product (and variation) of the shop with a SKU: how it is named and the quantity it holds (null: stock not tracked). */
  listStock(ubicacion: string | null): Promise<Map<string, { ref: ShopProductRef; cantidad: number | null }>>;
}

/** A call to a shop that failed: its status when the shop answered, and the shop's words. */
export class ShopCallError extends Error {
  override readonly name = 'ShopCallError';
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface CallPolicy {
  /** Longest wait for one call. */
  timeoutMs: number;
  /** Attempts of a call refused for the rate limit or failing for a transient reason. */
  attempts: number;
  /** Longest wait a shop's `Retry-After` is obeyed for (a longer one fails the call). */
  maxRetryAfterMs: number;
}

export const DEFAULT_CALL_POLICY: CallPolicy = { timeoutMs: 30_000, attempts: 5, maxRetryAfterMs: 60_000 };

/** How a failed call is retried: after `waitMs`, or not at all. */
export type Verdict = { retry: true; waitMs: number } | { retry: false };

/** 429 waits what `Retry-After` says (1 s when absent); 5xx and no answer back off 0.5, 1, 2, 4 s; anything else is final. */
export function verdictFor(status: number | null, retryAfter: string | null | undefined, attempt: number, policy: CallPolicy): Verdict {
  if (status === 429) {
    const seconds = Number(retryAfter);
    const waitMs = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000;
    return waitMs <= policy.maxRetryAfterMs ? { retry: true, waitMs } : { retry: false };
  }
  if (status === null || status >= 500) return { retry: true, waitMs: 500 * 2 ** Math.min(attempt - 1, 3) };
  return { retry: false };
}

/** Runs `call` under the policy; `judge` turns its failure into a verdict. */
export async function withRetries<T>(
  policy: CallPolicy,
  call: () => Promise<T>,
  judge: (err: unknown, attempt: number) => Verdict,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const verdict = judge(err, attempt);
      if (!verdict.retry || attempt >= policy.attempts) throw err;
      await sleep(verdict.waitMs);
    }
  }
}
