import type { Kysely } from 'kysely';
import { claimEvent, startConsumer, type Bus } from '@erp/bus';
import { isAppError, salesEvents, type ConsumerName } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { confirmIfReservada } from '../db/reserva.repository';
import type { InventoryDb } from '../db/tables';
import { confirmReserva } from '../flows/reservas.flow';

export const SALE_CREATED_CONSUMER: ConsumerName<'inventory'> = 'inventory-sale-created';

/**
 * Confirms the reservation of each committed sale. The common case, a reservation still
 * `reservada`, is one statement. Any other (released meanwhile, so its stock is taken again;
 * already confirmed; unknown) goes through the full transition with the event id claimed in the
 * same transaction. Confirming is idempotent besides, so redelivery is harmless either way.
 */
export async function startSaleCreatedConsumer(db: Kysely<InventoryDb>, bus: Bus): Promise<void> {
  await startConsumer(bus, {
    durable: SALE_CREATED_CONSUMER,
    events: salesEvents,
    subjects: ['events.sales.sale.created'],
    handler: async (_subject, event, meta) => {
      const clave = event.clave_reserva;
      if (clave === null) return;
      if (await confirmIfReservada(db, event.empresa_id, clave)) return;
      try {
        await inTransaction(db, async (trx) => {
          if (!(await claimEvent(trx, SALE_CREATED_CONSUMER, meta.eventId))) return;
          await confirmReserva(trx, event.empresa_id, clave);
        });
      } catch (err) {
        // A sale whose key never reserved anything has nothing to confirm.
        if (isAppError(err) && err.code === 'NOT_FOUND') {
          bus.logger.warn(
            { empresaId: event.empresa_id, clave, idVenta: event.id_venta },
            'sale created without a reservation under its key',
          );
          return;
        }
        throw err;
      }
    },
  });
}
