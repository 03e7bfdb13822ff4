import type { Kysely } from 'kysely';
import { startConsumer, type Bus } from '@erp/bus';
import { inventoryEvents, type ConsumerName } from '@erp/contracts';
import { markStockChanged } from '../db/stock.repository';
import type { WebhookDb } from '../db/tables';

export const STOCK_CONSUMER: ConsumerName<'webhook-ingest'> = 'webhook-ingest-stock';

/**
 * Hears every stock change of inventory and marks the products owed to the shops that show the
 * warehouse's stock; the push reads the stock itself when it goes, so events arriving late, twice
 * or out of order change nothing but when it goes.
 */
export async function startStockChangedConsumer(db: Kysely<WebhookDb>, bus: Bus, onMarked: (count: number) => void): Promise<void> {
  await startConsumer(bus, {
    durable: STOCK_CONSUMER,
    events: inventoryEvents,
    subjects: ['events.inventory.stock.changed'],
    concurrency: 4,
    handler: async (_subject, event) => {
      const marked = await markStockChanged(db, event.empresa_id, event.movimientos);
      if (marked > 0) onMarked(marked);
    },
  });
}
