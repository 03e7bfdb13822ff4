import { Random } from '@erp/testing';

/**
 * What the chaos run did to the system, with the time of each step: a fault (a process killed, a
 * node paused, quorum lost), a recovery (a replica started in its place, the cluster current
 * again) or a note (who led the stream at that moment). A failed check's evidence lists the steps
 * around the moment its items were written.
 */
export interface FaultRecord {
  /** Epoch ms when the step began. */
  at: number;
  /** Epoch ms when a fault that lasts (a pause, a node down) ended; unset for an instant or a step that never ended. */
  until?: number;
  kind: 'fault' | 'recovery' | 'note';
  what: string;
}

export class FaultLog {
  readonly entries: FaultRecord[] = [];

  /** Records a step now; the returned function marks the end of a fault that lasts. */
  record(kind: FaultRecord['kind'], what: string): () => void {
    const entry: FaultRecord = { at: Date.now(), kind, what };
    this.entries.push(entry);
    return () => {
      entry.until = Date.now();
    };
  }

  /** Steps that began in [from, to], or a lasting fault that overlapped it. */
  within(from: number, to: number): FaultRecord[] {
    return this.entries.filter((e) => (e.at >= from && e.at <= to) || (e.at < from && (e.until ?? e.at) >= from));
  }
}

/**
 * The seed of repeat `k` (1-based) of a run whose base seed is `base`: repeat 1 uses the base seed
 * itself, so the seed printed for any repeat, given as CHAOS_SEED to a run of one repeat, replays it.
 */
export function repeatSeed(base: number, k: number): number {
  if (k <= 1) return base >>> 0;
  return Math.floor(new Random(base).fork(`repeat-${k}`).next() * 1_000_000_000);
}

/**
 * The draws that shape one crash phase from its seed: the order of the faults, the pause after
 * each, how long a killed process stays down, and the load's mix of operations. Each concern draws
 * from its own fork, so changing how many draws one takes leaves the others as they were.
 */
export class ChaosPlan {
  private readonly order: Random;
  private readonly timing: Random;
  readonly loadSeed: number;
  readonly exportEveryMs: number;

  constructor(
    readonly seed: number,
    /** The pause between faults the run was given (CHAOS_PAUSE_MS): each pause is drawn around it. */
    private readonly pauseMs: number,
  ) {
    const root = new Random(seed);
    this.order = root.fork('order');
    this.timing = root.fork('timing');
    this.loadSeed = Math.floor(root.fork('load').next() * 2 ** 31);
    this.exportEveryMs = root.fork('exports').int(3_000, 5_000);
  }

  /** The items in an order drawn from the seed (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.order.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** A pause after a fault: between half and one and a half times the configured one. */
  pause(): number {
    return Math.round(this.pauseMs * (0.5 + this.timing.next()));
  }

  /** Milliseconds in [min, max] (a process's time down, a partition's length). */
  between(min: number, max: number): number {
    return this.timing.int(min, max);
  }

  chance(p: number): boolean {
    return this.timing.chance(p);
  }
}
