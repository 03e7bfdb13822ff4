import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus, Logger } from '@erp/bus';
import { isAppError } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { startPeriodic, type Worker } from '@erp/runtime';
import { findDueReservas, postponeReserva, type DueReserva } from '../db/reserva.repository';
import type { InventoryDb } from '../db/tables';
import { nextCheckDelayMs, sweepDecision } from '../domain/reservation';
import { confirmReserva, releaseReserva } from '../flows/reservas.flow';
import { busSales } from '../ports/sales.port';

export interface ReservaSweeperOptions {
  db: Kysely<InventoryDb>;
  bus: Bus;
  logger: Logger;
  intervalMs: number;
  /** How long to wait for the origin's answer. */
  checkTimeoutMs: number;
  batchSize?: number;
}

/**
 * Resolves reservations left `reservada` past their check time by asking their origin whether
 * the operation exists: it does → confirm, it does not → release. When the origin cannot answer
 * (not running, no responders, timeout) the reservation waits for a later sweep with a growing
 * pause. Replicas may sweep at once: every transition is conditional, so the loser does nothing.
 */
export function startReservaSweeper(options: ReservaSweeperOptions): Worker {
  const { db, logger } = options;
  const sales = busSales(options.bus);

  const askOrigin = async (reserva: DueReserva): Promise<{ exists: boolean } | 'unknown'> => {
    if (reserva.origen !== 'venta') return 'unknown';
    try {
      return await sales.saleExists(
        { requestId: `sweep-${randomUUID()}` },
        { empresa_id: reserva.empresa_id, clave: reserva.clave },
        { timeoutMs: options.checkTimeoutMs },
      );
    } catch (err) {
      logger.debug({ err, clave: reserva.clave }, 'origin of an overdue reservation did not answer');
      return 'unknown';
    }
  };

  const resolve = async (reserva: DueReserva): Promise<void> => {
    const decision = sweepDecision(await askOrigin(reserva));
    const log = { empresaId: reserva.empresa_id, clave: reserva.clave, origen: reserva.origen };
    if (decision === 'later') {
      await postponeReserva(db, reserva.id, nextCheckDelayMs(options.intervalMs, reserva.revisiones));
      return;
    }
    try {
      if (decision === 'confirm') {
        await inTransaction(db, (trx) => confirmReserva(trx, reserva.empresa_id, reserva.clave));
        logger.info(log, 'overdue reservation confirmed: its origin exists');
        return;
      }
      await inTransaction(db, (trx) => releaseReserva(trx, reserva.empresa_id, reserva.clave));
      logger.info(log, 'overdue reservation released: its origin does not exist');
    } catch (err) {
      // Confirmed meanwhile by its event (a release then conflicts): nothing left to do.
      if (!(isAppError(err) && err.code === 'CONFLICT')) throw err;
    }
  };

  return startPeriodic('reservation sweep', options.intervalMs, logger, async (stopped) => {
    for (const reserva of await findDueReservas(db, options.batchSize ?? 100)) {
      if (stopped()) break;
      await resolve(reserva);
    }
  });
}
