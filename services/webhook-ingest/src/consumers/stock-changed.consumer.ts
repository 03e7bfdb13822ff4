import type { Kysely } from 'kysely';
import { startConsumer, type Bus } from '@erp/bus';
import { inventoryEvents, type ConsumerName } from '@erp/contracts';
import { GatheredWrites } from '@erp/runtime';
import { markStockChanged, type StockMove } from '../db/stock.repository';
import type { WebhookDb } from '../db/tables';

export const STOCK_CONSUMER: ConsumerName<'webhook-ingest'> = 'webhook-ingest-stock';

/** Stock events handled at once; their marks are written together. */
const CONCURRENCY = 32;
/** How long the first event of a batch waits for others: a sale's event comes one at a time. */
const MARK_WINDOW_MS = 10;

/**
 * Hears every stock change of inventory and marks the products owed to the shops that show the
 * warehouse's stock; the push reads the stock itself when it goes, so events arriving late, twice
 * or out of order change nothing but when it goes. The events handled together (within
 * `MARK_WINDOW_MS`, or while a write is under way) are marked in one statement, and each is
 * acknowledged once it committed (`GatheredWrites`: an event the database refuses fails alone).
 */
export async function startStockChangedConsumer(db: Kysely<WebhookDb>, bus: Bus, onMarked: (count: number) => void): Promise<void> {
  const marks = new GatheredWrites<{ empresaId: number; moves: readonly StockMove[] }>({
    windowMs: MARK_WINDOW_MS,
    maxBatch: CONCURRENCY,
    write: async (changes) => {
      const marked = await markStockChanged(db, changes);
      if (marked > 0) onMarked(marked);
    },
  });
  await startConsumer(bus, {
    durable: STOCK_CONSUMER,
    events: inventoryEvents,
    subjects: ['events.inventory.stock.changed'],
    concurrency: CONCURRENCY,
    handler: (_subject, event) => marks.add({ empresaId: event.empresa_id, moves: event.movimientos }),
  });
}
