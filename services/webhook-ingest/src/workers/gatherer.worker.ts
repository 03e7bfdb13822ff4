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
 * `maxBatch`, in arrival order. The storing of deliveries (one commit each) and the processing of
 * new orders (one sales batch each) gather this way.
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
