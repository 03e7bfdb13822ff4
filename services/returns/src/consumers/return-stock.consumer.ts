import type { Kysely } from 'kysely';
import { startConsumerPerSubject, type Bus } from '@erp/bus';
import { returnsEvents, type ConsumerName } from '@erp/contracts';
import type { ReturnsDb } from '../db/tables';
import { settleStock } from '../flows/settle-stock.flow';

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
  await startConsumerPerSubject(bus, {
    durables: RETURN_STOCK_CONSUMERS,
    events: returnsEvents,
    handler: async (_subject, event, meta) => settleStock(db, bus, event.empresa_id, event.id_devolucion, meta.ctx),
  });
}
