import { randomUUID } from 'node:crypto';
import { startPeriodic, type Worker } from '@erp/runtime';
import { ventasWithStaleCambios } from '../db/cambio-en-curso.repository';
import { busInventory } from '../ports/inventory.port';
import { squareRevisions } from '../flows/stock-revision.flow';
import type { SweeperOptions } from './sweeper-options';

/**
 * Squares the sales whose last change died after inventory may have applied its stock revision
 * (a crash, a lost database, a failed commit): without it such an orphaned revision kept the
 * stock off until the sale's next change. Squaring holds the sale's row lock, so replicas may
 * sweep at once.
 */
export function startRevisionSweeper(options: SweeperOptions): Worker {
  const { db, bus, logger } = options;
  const inventory = busInventory(bus);
  return startPeriodic('revision sweep', options.intervalMs, logger, async (stopped) => {
    const stale = await ventasWithStaleCambios(db, options.afterMs, options.batchSize ?? 100);
    for (const { empresa_id, venta_id } of stale) {
      if (stopped()) break;
      const target = { empresaId: empresa_id, ventaId: venta_id, requestId: `sweep-${randomUUID()}` };
      const reverted = await squareRevisions(db, inventory, target, options.afterMs);
      if (reverted.length > 0)
        logger.warn({ empresaId: empresa_id, ventaId: venta_id, reverted }, 'orphaned stock revisions of a sale reverted');
    }
  });
}
