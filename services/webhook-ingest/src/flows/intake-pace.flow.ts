/** Arrivals are counted in slots of this length; the rate is over the last `SLOTS` of them. */
const SLOT_MS = 100;
const SLOTS = 10;
/** While processings wait, how often the rate is looked at again (it falls without any event). */
const RECHECK_MS = 50;

export interface IntakePaceOptions {
  /** Processings at once while deliveries arrive slowly (or not at all). */
  concurrency: number;
  /** Processings at once while deliveries arrive faster than `busyPerSecond`. */
  concurrencyDuringIntake: number;
  busyPerSecond: number;
  now?: () => number;
}

/**
 * Lets processing yield to intake. Receiving counts each delivery it takes (`arrived`);
 * processing takes a turn (`acquire`) before each delivery and gives it back after. While this
 * replica receives more than `busyPerSecond` deliveries a second (over the last second), only
 * `concurrencyDuringIntake` processings run at once, so a burst is accepted at full speed; once
 * it calmed down, `concurrency` run, and the backlog is processed right after.
 */
export class IntakePace {
  private readonly counts = new Array<number>(SLOTS).fill(0);
  private slot = 0;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: IntakePaceOptions) {
    this.now = options.now ?? Date.now;
  }

  arrived(): void {
    this.advance();
    this.counts[this.slot % SLOTS]!++;
  }

  /** Deliveries received over the last second. */
  ratePerSecond(): number {
    this.advance();
    return (this.counts.reduce((a, b) => a + b, 0) * 1000) / (SLOT_MS * SLOTS);
  }

  /** Processings allowed at once now. */
  limit(): number {
    return this.ratePerSecond() > this.options.busyPerSecond ? Math.min(this.options.concurrencyDuringIntake, this.options.concurrency) : this.options.concurrency;
  }

  /** Waits for a turn; call the returned function when the processing is over. */
  async acquire(): Promise<() => void> {
    if (this.waiting.length === 0 && this.running < this.limit()) this.running++;
    // `admit` counts the turn as running before it resumes us.
    else await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.watch();
    });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.admit();
    };
  }

  private admit(): void {
    while (this.waiting.length > 0 && this.running < this.limit()) {
      this.running++;
      this.waiting.shift()!();
    }
    this.watch();
  }

  /** While someone waits, the rate is looked at again: the end of a burst starts waiting processings. */
  private watch(): void {
    if (this.waiting.length === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.admit();
    }, RECHECK_MS);
    this.timer.unref();
  }

  private advance(): void {
    const current = Math.floor(this.now() / SLOT_MS);
    if (current - this.slot >= SLOTS) this.counts.fill(0);
    else for (let s = this.slot + 1; s <= current; s++) this.counts[s % SLOTS] = 0;
    this.slot = Math.max(this.slot, current);
  }
}
