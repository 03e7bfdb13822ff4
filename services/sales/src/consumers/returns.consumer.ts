import type { Kysely } from 'kysely';
import { PoisonEventError, claimEvent, startConsumerPerSubject, type Bus } from '@erp/bus';
import { returnsEvents, type ConsumerName } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { addMontoDevuelto, confirmRegistro } from '../db/registro-devolucion.repository';
import type { SalesDb } from '../db/tables';
import { lockVenta } from '../db/venta.repository';
import { RETURNS_CLAIMER, RETURN_CREATED, returnClaim } from '../domain/return-claims';

export const RETURNS_CONSUMERS = {
  'events.returns.return.created': 'sales-return-created',
  'events.returns.return.annulled': 'sales-return-annulled',
} as const satisfies Record<string, ConsumerName<'sales'>>;

/**
 * Keeps each sale's returned amount (and so its `saldo`) in step with its active returns: a
 * created return adds its total (and confirms its registration) unless squaring the sale's
 * registrations already booked it, an annulled one takes it off. Each return is applied once per
 * event kind whatever the message id (`claimEvent` on `<subject>:<return id>`, in the transaction
 * of the change), so a redelivered or republished event changes nothing; the two kinds commute,
 * so their order does not matter either.
 */
export async function startReturnsConsumers(db: Kysely<SalesDb>, bus: Bus): Promise<void> {
  await startConsumerPerSubject(bus, {
    durables: RETURNS_CONSUMERS,
    events: returnsEvents,
    handler: async (subject, event) => {
      const sign = subject === RETURN_CREATED ? 1 : -1;
      await inTransaction(db, async (trx) => {
        // The sale's row lock first, as squaring a sale's registrations takes it before claiming the
        // same created event: one lock order, no deadlock between the two.
        if (!(await lockVenta(trx, event.empresa_id, event.id_venta))) {
          throw new PoisonEventError(
            `Return ${event.id_devolucion} names sale ${event.id_venta}, which company ${event.empresa_id} does not have`,
          );
        }
        if (!(await claimEvent(trx, RETURNS_CLAIMER, returnClaim(subject, event.id_devolucion)))) return;
        // A return that registered with its sale already counts as active; one that did not (made
        // before registration existed) is counted here.
        const registered =
          sign > 0 &&
          event.clave_registro !== undefined &&
          (await confirmRegistro(trx, event.empresa_id, event.clave_registro, event.id_devolucion));
        const counted = registered === 'registrada' || registered === 'confirmada';
        await addMontoDevuelto(trx, event.empresa_id, event.id_venta, sign, event.total, counted ? 0 : sign);
      });
    },
  });
}
