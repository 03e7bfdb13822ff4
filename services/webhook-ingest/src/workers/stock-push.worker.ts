import { startPeriodic, type PeriodicTask } from '@erp/runtime';
import { claimStock } from '../db/stock.repository';
import { pushStock, type StockPushDeps } from '../flows/push-stock.flow';

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
export function startStockPush(options: StockPushOptions): PeriodicTask {
  const tick = Math.max(100, Math.min(250, Math.floor(options.delayMs / 8)));
  return startPeriodic('stock push', tick, options.logger, async (stopped) => {
    for (let round = 0; round < 10 && !stopped(); round++) {
      const claimed = await claimStock(options.db, options.owner, options.leaseMs, options.delayMs, options.batch);
      if (claimed.length === 0) return;
      await pushStock(options, claimed);
      if (claimed.length < options.batch) return;
    }
  });
}
