import type { Kysely } from 'kysely';
import { startConsumer, type Bus } from '@erp/bus';
import { returnsEvents, type ConsumerName } from '@erp/contracts';
import type { ReturnsDb } from '../db/tables';
import { settleStock } from '../flows/settle-stock.flow';

/** One durable per subject: a consumer filtering on several subjects needs JetStream 2.10. */
export const RETURN_STOCK_CONSUMERS = {
  'events.returns.return.created': 'returns-stock-created',
  'events.returns.return.annulled': 'returns-stock-annulled',
} as const satisfies Record<string, ConsumerName<'returns'>>;

/**
 * The guarantee behind the handlers' own call: every created or annulled return ends with its
 * stock settled, even when inventory was unreachable when it was made or the process died right
 * after its commit. Settling is idempotent (inventory keys, marks on the return), so a
 * redelivered event moves nothing.
 */
export async function startReturnStockConsumers(db: Kysely<ReturnsDb>, bus: Bus): Promise<void> {
  for (const [subject, durable] of Object.entries(RETURN_STOCK_CONSUMERS) as Array<[keyof typeof RETURN_STOCK_CONSUMERS, string]>) {
    await startConsumer(bus, {
      durable,
      events: returnsEvents,
      subjects: [subject],
      handler: async (_subject, event, meta) => settleStock(db, bus, event.empresa_id, event.id_devolucion, meta.ctx),
    });
  }
}
