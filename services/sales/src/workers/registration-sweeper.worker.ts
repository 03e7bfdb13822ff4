import { randomUUID } from 'node:crypto';
import { startPeriodic, type Worker } from '@erp/runtime';
import { ventasWithStaleRegistros } from '../db/registro-devolucion.repository';
import { squareRegistrations } from '../flows/square-registrations.flow';
import type { SweeperOptions } from './sweeper-options';

/**
 * Squares the sales whose return registrations stayed pending: a return that registered and then
 * failed asks sales to square the sale at once, but when that request is lost (the returns
 * service stopped, a timeout under load) the registration would count in `devoluciones_activas`
 * until the sale's next annulment or update. Squaring is safe at any moment (a return still being
 * made keeps its registration counting), so replicas may sweep at once.
 */
export function startRegistrationSweeper(options: SweeperOptions): Worker {
  const { db, bus, logger } = options;
  return startPeriodic('registration sweep', options.intervalMs, logger, async (stopped) => {
    const stale = await ventasWithStaleRegistros(db, options.afterMs, options.batchSize ?? 100);
    for (const { empresa_id, venta_id } of stale) {
      if (stopped()) break;
      const activas = await squareRegistrations(db, bus, empresa_id, venta_id, `sweep-${randomUUID()}`);
      logger.info({ empresaId: empresa_id, ventaId: venta_id, activas }, 'pending return registrations of a sale squared');
    }
  });
}
