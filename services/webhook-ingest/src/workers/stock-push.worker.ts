import { createHash } from 'node:crypto';
import { startPeriodic, type Worker } from '@erp/runtime';
import { claimStock, type PushTarget } from '../db/stock.repository';
import type { ShopSecrets } from '../domain/credentials';
import { pushStock, type StockPushDeps } from '../flows/push-stock.flow';
import { openTargetShop, type TiendaApi } from '../ports/shops';

export interface StockPushOptions extends StockPushDeps {
  /** How long after a product's first change its push waits for more (a burst of sales is one write). */
  delayMs: number;
  leaseMs: number;
  /** Products taken per round. */
  batch: number;
}

/**
 * The stock push: every round takes the products whose coalescing window has passed (several
 * replicas take disjoint sets: `SKIP LOCKED` and a lease) and pushes them, each integration on
 * its own. What is owed lives in Postgres, so a push that failed, or a replica that died in the
 * middle of one, is pushed again later: nothing is lost on a restart.
 */
export function startStockPush(options: StockPushOptions): Worker {
  // One client per integration and credentials, kept between rounds: what it learnt of the shop
  // (Shopify's location, its cost bucket) is not asked again at every push.
  const clients = new Map<number, { key: string; shop: TiendaApi }>();
  const open = options.openTienda ?? openTargetShop(options.policy);
  const cached = (target: PushTarget, secrets: ShopSecrets): TiendaApi => {
    const key = createHash('sha256')
      .update(`${target.tienda_url}\n${target.tienda_ubicacion}\n`)
      .update(target.tienda_credenciales!)
      .digest('hex');
    const hit = clients.get(target.id);
    if (hit?.key === key) return hit.shop;
    const shop = open(target, secrets);
    clients.set(target.id, { key, shop });
    return shop;
  };
  const deps: StockPushDeps = { ...options, openTienda: cached };
  const tick = Math.max(100, Math.min(250, Math.floor(options.delayMs / 8)));
  return startPeriodic('stock push', tick, options.logger, async (stopped) => {
    for (let round = 0; round < 10 && !stopped(); round++) {
      const claimed = await claimStock(options.db, options.owner, options.leaseMs, options.delayMs, options.batch);
      if (claimed.length === 0) return;
      await pushStock(deps, claimed);
      if (claimed.length < options.batch) return;
    }
  });
}
