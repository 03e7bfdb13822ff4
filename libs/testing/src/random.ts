/**
 * A seeded generator (mulberry32): the same seed always draws the same sequence, so a failing
 * run of a randomized test, a load scenario or a benchmark's data can be replayed exactly.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /**
   * Index in [0, n) skewed towards small values (a few best sellers, a long tail): the square of
   * a uniform draw puts about 30 % of the picks in the first 10 % of the range.
   */
  skewed(n: number): number {
    const u = this.next();
    return Math.min(n - 1, Math.floor(u * u * n));
  }

  /** A fresh generator derived from this one's state and a label, so users of one seed do not shift each other's draws. */
  fork(label: string): Random {
    let h = this.state ^ 0x9e3779b9;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
    return new Random(h >>> 0);
  }
}

/** The generator as a bare function of uniform draws in [0, 1), for code that only needs `next`. */
export function mulberry32(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}
