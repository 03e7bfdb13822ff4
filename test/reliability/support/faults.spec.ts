import { ChaosPlan, FaultLog, repeatSeed } from './faults';

/** The chaos run's repeats are replayable from the seeds they print, and each draws a schedule of its own. */
describe('the crash phase drawn from its seed', () => {
  const schedule = (seed: number) => {
    const plan = new ChaosPlan(seed, 4_000);
    return {
      order: plan.shuffle(Array.from({ length: 18 }, (_, i) => i)),
      pauses: Array.from({ length: 18 }, () => plan.pause()),
      down: Array.from({ length: 5 }, () => plan.between(1_000, 4_000)),
      load: plan.loadSeed,
      exports: plan.exportEveryMs,
    };
  };

  it('replays a repeat from the seed it printed: repeat 1 uses the base seed, repeat k one derived from it', () => {
    expect(repeatSeed(689383, 1)).toBe(689383);
    const third = repeatSeed(689383, 3);
    expect(third).toBe(repeatSeed(689383, 3));
    expect(schedule(third)).toEqual(schedule(third));
    const seeds = new Set(Array.from({ length: 5 }, (_, k) => repeatSeed(689383, k + 1)));
    expect(seeds.size).toBe(5);
  });

  it('draws another order, other pauses and another load for another seed, within the bounds', () => {
    const [a, b] = [schedule(repeatSeed(1, 1)), schedule(repeatSeed(1, 2))];
    expect(a.order).not.toEqual(b.order);
    expect(a.pauses).not.toEqual(b.pauses);
    expect(a.load).not.toBe(b.load);
    expect([...a.order].sort((x, y) => x - y)).toEqual(Array.from({ length: 18 }, (_, i) => i));
    for (const p of [...a.pauses, ...b.pauses]) expect(p >= 2_000 && p <= 6_000).toBe(true);
    for (const d of [...a.down, ...b.down]) expect(d >= 1_000 && d <= 4_000).toBe(true);
  });

  it('lists the faults that began in a window or lasted into it', () => {
    const log = new FaultLog();
    log.entries.push(
      { at: 1_000, until: 9_000, kind: 'fault', what: 'quorum lost' },
      { at: 2_000, kind: 'fault', what: 'kill -9 sales#1' },
      { at: 20_000, kind: 'recovery', what: 'sales#3 started' },
    );
    expect(log.within(5_000, 30_000).map((f) => f.what)).toEqual(['quorum lost', 'sales#3 started']);
    expect(log.within(10_000, 15_000)).toEqual([]);
  });
});
