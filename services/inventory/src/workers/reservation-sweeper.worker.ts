import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus, Logger } from '@erp/bus';
import { isAppError } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { startPeriodic, type PeriodicTask } from '@erp/runtime';
import { findDueReservas, postponeReserva, type DueReserva } from '../db/reserva.repository';
import type { InventoryDb } from '../db/tables';
import { nextCheckDelayMs, sweepDecision } from '../domain/reservation';
import { confirmReservation, releaseReservation } from '../flows/reservations.flow';
import { busSales, type SalesPort } from '../ports/sales.port';

export interface SweeperOptions {
  db: Kysely<InventoryDb>;
  bus: Bus;
  logger: Logger;
  intervalMs: number;
  /** How long to wait for the origin's answer. */
  checkTimeoutMs: number;
  batchSize?: number;
}

export interface SweepResult {
  confirmed: number;
  released: number;
  postponed: number;
}

/**
 * Resolves reservations left `reservada` past their check time by asking their origin whether
 * the operation exists: it does → confirm, it does not → release. When the origin cannot answer
 * (not running, no responders, timeout) the reservation waits for a later sweep with a growing
 * pause. Replicas may sweep at once: every transition is conditional, so the loser does nothing.
 */
export class ReservationSweeper {
  private task: PeriodicTask | undefined;
  private stopped = false;
  private readonly sales: SalesPort;

  constructor(private readonly options: SweeperOptions) {
    this.sales = busSales(options.bus);
  }

  start(): void {
    this.task = startPeriodic('reservation sweep', this.options.intervalMs, this.options.logger, () => this.sweepOnce());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
  }

  /** One pass over the due reservations (also what tests and operators call directly). */
  async sweepOnce(): Promise<SweepResult> {
    const result: SweepResult = { confirmed: 0, released: 0, postponed: 0 };
    const due = await findDueReservas(this.options.db, this.options.batchSize ?? 100);
    for (const reserva of due) {
      if (this.stopped) break;
      const outcome = await this.resolve(reserva);
      result[outcome] += 1;
    }
    return result;
  }

  private async resolve(reserva: DueReserva): Promise<keyof SweepResult> {
    const { db, logger } = this.options;
    const decision = sweepDecision(await this.askOrigin(reserva));
    const log = { empresaId: reserva.empresa_id, clave: reserva.clave, origen: reserva.origen };
    if (decision === 'later') {
      await postponeReserva(db, reserva.id, nextCheckDelayMs(this.options.intervalMs, reserva.revisiones));
      return 'postponed';
    }
    try {
      if (decision === 'confirm') {
        await inTransaction(db, (trx) => confirmReservation(trx, reserva.empresa_id, reserva.clave));
        logger.info(log, 'overdue reservation confirmed: its origin exists');
        return 'confirmed';
      }
      await inTransaction(db, (trx) => releaseReservation(trx, reserva.empresa_id, reserva.clave));
      logger.info(log, 'overdue reservation released: its origin does not exist');
      return 'released';
    } catch (err) {
      // Confirmed meanwhile by its event (a release then conflicts): nothing left to do.
      if (isAppError(err) && err.code === 'CONFLICT') return decision === 'confirm' ? 'confirmed' : 'released';
      throw err;
    }
  }

  private async askOrigin(reserva: DueReserva): Promise<{ exists: boolean } | 'unknown'> {
    if (reserva.origen !== 'venta') return 'unknown';
    try {
      return await this.sales.saleExists(
        { requestId: `sweep-${randomUUID()}` },
        { empresa_id: reserva.empresa_id, clave: reserva.clave },
        { timeoutMs: this.options.checkTimeoutMs },
      );
    } catch (err) {
      this.options.logger.debug({ err, clave: reserva.clave }, 'origin of an overdue reservation did not answer');
      return 'unknown';
    }
  }
}
