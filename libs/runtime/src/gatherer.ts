import { pgErrorKind } from '@erp/db';

export interface GathererOptions<T> {
  /** How long the first item of a batch waits for others (0: those arriving in the same turn of the event loop). */
  windowMs: number;
  /** A batch this large is handed over at once, without waiting for the window to end. */
  maxBatch: number;
  /** Batches handled at once; while that many are, new items gather for the next one. */
  maxInFlight: number;
  /** Handles one batch; it answers its items' callers itself, and must not throw. */
  handle: (batch: T[]) => Promise<void>;
}

/**
 * Items that arrive together, handed over in batches: what arrives within `windowMs` of a batch's
 * first item, or while `maxInFlight` batches are being handled, goes in one batch of at most
 * `maxBatch`, in arrival order. Webhook-ingest stores deliveries (one commit each) and processes
 * new orders (one sales batch each) this way; `GatheredWrites` writes events' rows this way.
 */
export class Gatherer<T> {
  private pending: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;

  constructor(private readonly options: GathererOptions<T>) {}

  add(item: T): void {
    this.pending.push(item);
    this.schedule();
  }

  private schedule(): void {
    // At the limit, the batch in flight that finishes calls this again.
    if (this.pending.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    if (this.pending.length >= this.options.maxBatch) return this.flush();
    this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0, this.options.maxBatch);
    if (batch.length === 0) return;
    this.inFlight++;
    void this.options.handle(batch).finally(() => {
      this.inFlight--;
      this.schedule();
    });
    this.schedule();
  }
}

export interface GatheredWritesOptions<T> {
  /** How long the first item of a batch waits for others. */
  windowMs: number;
  /** Most items written at once. */
  maxBatch: number;
  /** Writes the items of one batch together (one statement or transaction). */
  write: (items: T[]) => Promise<void>;
}

interface PendingWrite<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Writes what arrives together in one write, one batch at a time (`Gatherer`), and settles each
 * `add` once its batch committed. A batch the database refuses for another reason than being away
 * is written again one item at a time, so an item it refuses fails alone and the others are
 * written; with the database away, every item of the batch fails (to be redelivered).
 */
export class GatheredWrites<T> {
  private readonly gatherer: Gatherer<PendingWrite<T>>;

  constructor(private readonly options: GatheredWritesOptions<T>) {
    this.gatherer = new Gatherer({
      windowMs: options.windowMs,
      maxBatch: options.maxBatch,
      maxInFlight: 1,
      handle: async (batch) => {
        if (await this.attempt(batch)) return;
        for (const w of batch) await this.attempt([w]);
      },
    });
  }

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => this.gatherer.add({ item, resolve, reject }));
  }

  /** Writes a batch and settles its items; false, settling none, when the database refused a batch of several. */
  private async attempt(batch: Array<PendingWrite<T>>): Promise<boolean> {
    try {
      await this.options.write(batch.map((w) => w.item));
    } catch (err) {
      if (batch.length > 1 && pgErrorKind(err) !== 'unavailable') return false;
      for (const w of batch) w.reject(err);
      return true;
    }
    for (const w of batch) w.resolve();
    return true;
  }
}
