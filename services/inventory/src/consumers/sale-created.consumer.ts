import type { Kysely } from 'kysely';
import { claimEvent, startConsumer, type Bus } from '@erp/bus';
import { isAppError, salesEvents } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { InventoryDb } from '../db/tables';
import { confirmReservation } from '../ledger/reservations';

export const SALE_CREATED_CONSUMER = 'inventory-sale-created';

/**
 * Confirms the reservation of each committed sale. The event id is claimed in the same
 * transaction as the confirmation, and confirming is idempotent besides, so redelivery is harmless.
 */
export async function startSaleCreatedConsumer(db: Kysely<InventoryDb>, bus: Bus): Promise<void> {
  await startConsumer(bus, {
    durable: SALE_CREATED_CONSUMER,
    events: salesEvents,
    subjects: ['events.sales.sale.created'],
    handler: async (_subject, event, meta) => {
      const clave = event.clave_reserva;
      if (clave === null) return;
      try {
        await inTransaction(db, async (trx) => {
          if (!(await claimEvent(trx, SALE_CREATED_CONSUMER, meta.eventId))) return;
          await confirmReservation(trx, event.empresa_id, clave);
        });
      } catch (err) {
        // A sale whose key never reserved anything has nothing to confirm.
        if (isAppError(err) && err.code === 'NOT_FOUND') {
          bus.logger.warn({ empresaId: event.empresa_id, clave, idVenta: event.id_venta }, 'sale created without a reservation under its key');
          return;
        }
        throw err;
      }
    },
  });
}
