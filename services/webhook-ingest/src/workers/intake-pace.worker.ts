/** Arrivals are counted in slots of this length; the rate is over the last `SLOTS` of them. */
const SLOT_MS = 100;
const SLOTS = 10;
/** While processings wait, how often the rate is looked at again (it falls without any event). */
const RECHECK_MS = 50;

export interface IntakePaceOptions {
  /** Processings at once while deliveries arrive slowly (or not at all). */
  concurrency: number;
  /** Processings at once while deliveries arrive faster than `busyPerSecond` (0: none until the burst is over). */
  concurrencyDuringIntake: number;
  busyPerSecond: number;
  /** Longest processing yields to an intake that stays fast: past it, the intake is no burst but the load, which processing must keep up with. */
  maxYieldMs?: number;
  now?: () => number;
}

/**
 * Lets processing yield to intake. Receiving counts each delivery it takes (`arrived`);
 * processing takes a turn (`acquire`) before each delivery and gives it back after. While this
 * replica receives more than `busyPerSecond` deliveries a second (over the last second), only
 * `concurrencyDuringIntake` processings run at once, so a burst is accepted at full speed; once
 * it calmed down, `concurrency` run, and the backlog is processed right after. An intake that
 * stays fast beyond `maxYieldMs` (10 s by default) is the steady load, not a burst: processing goes
 * back to full speed so the backlog does not grow for as long as it lasts.
 */
export class IntakePace {
  private readonly counts = new Array<number>(SLOTS).fill(0);
  private slot = 0;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  /** When the current fast intake started; undefined while intake is slow. */
  private busySince: number | undefined;
  private lastBusy = 0;

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
    const now = this.now();
    if (this.ratePerSecond() <= this.options.busyPerSecond) {
      this.busySince = undefined;
      return this.options.concurrency;
    }
    // Fast intake seen last more than a rate window ago: that was another burst.
    if (this.busySince === undefined || now - this.lastBusy > SLOT_MS * SLOTS) this.busySince = now;
    this.lastBusy = now;
    if (now - this.busySince > (this.options.maxYieldMs ?? 10_000)) return this.options.concurrency;
    return Math.min(this.options.concurrencyDuringIntake, this.options.concurrency);
  }

  /** Waits for a turn; call the returned function when the processing is over. */
  async acquire(): Promise<() => void> {
    if (this.waiting.length === 0 && this.running < this.limit()) this.running++;
    // `admit` counts the turn as running before it resumes us.
    else
      await new Promise<void>((resolve) => {
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
