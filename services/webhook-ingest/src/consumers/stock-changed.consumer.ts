import type { Kysely } from 'kysely';
import { startConsumer, type Bus } from '@erp/bus';
import { inventoryEvents, type ConsumerName } from '@erp/contracts';
import { pgErrorKind } from '@erp/db';
import { markStockChanged, type StockMove } from '../db/stock.repository';
import type { WebhookDb } from '../db/tables';
import { Gatherer } from '../workers/gatherer.worker';

export const STOCK_CONSUMER: ConsumerName<'webhook-ingest'> = 'webhook-ingest-stock';

/** Stock events handled at once; their marks are written together. */
const CONCURRENCY = 32;
/** How long the first event of a batch waits for others: a sale's event comes one at a time. */
const MARK_WINDOW_MS = 10;

interface Waiting {
  empresaId: number;
  moves: readonly StockMove[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Hears every stock change of inventory and marks the products owed to the shops that show the
 * warehouse's stock; the push reads the stock itself when it goes, so events arriving late, twice
 * or out of order change nothing but when it goes. The events handled together (within
 * `MARK_WINDOW_MS`, or while a write is under way) are marked in one statement, and each is
 * acknowledged once it committed. A write the database refuses is tried again one event at a time;
 * one that fails for a database away fails every event, which come back.
 */
export async function startStockChangedConsumer(db: Kysely<WebhookDb>, bus: Bus, onMarked: (count: number) => void): Promise<void> {
  // Marks a batch and answers its events; false, answering none, when the database refused a batch of several.
  const mark = async (batch: Waiting[]): Promise<boolean> => {
    try {
      const marked = await markStockChanged(db, batch);
      if (marked > 0) onMarked(marked);
      for (const w of batch) w.resolve();
      return true;
    } catch (err) {
      if (batch.length > 1 && pgErrorKind(err) !== 'unavailable') return false;
      for (const w of batch) w.reject(err);
      return true;
    }
  };
  const marks = new Gatherer<Waiting>({
    windowMs: MARK_WINDOW_MS,
    maxBatch: CONCURRENCY,
    maxInFlight: 1,
    handle: async (batch) => {
      if (await mark(batch)) return;
      // One event the database refuses fails alone, not the events written with it.
      for (const w of batch) await mark([w]);
    },
  });
  await startConsumer(bus, {
    durable: STOCK_CONSUMER,
    events: inventoryEvents,
    subjects: ['events.inventory.stock.changed'],
    concurrency: CONCURRENCY,
    handler: (_subject, event) =>
      new Promise<void>((resolve, reject) => marks.add({ empresaId: event.empresa_id, moves: event.movimientos, resolve, reject })),
  });
}
