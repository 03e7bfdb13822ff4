import { IntakePace } from './intake-pace.worker';

describe('IntakePace', () => {
  let now = 1_000_000;
  const sut = (concurrencyDuringIntake = 1) =>
    new IntakePace({ concurrency: 4, concurrencyDuringIntake, busyPerSecond: 50, now: () => now });
  const flush = () => new Promise((r) => setImmediate(r));

  it('allows full concurrency while deliveries arrive slowly, one turn while they arrive fast, and full again a second after', () => {
    const pace = sut();
    for (let i = 0; i < 50; i++) pace.arrived();
    expect(pace.limit()).toBe(4);
    pace.arrived();
    expect(pace.limit()).toBe(1);
    now += 500;
    expect(pace.limit()).toBe(1);
    now += 600;
    expect(pace.limit()).toBe(4);
  });

  it('yields for 10 seconds at most to an intake that stays fast: then it is the load, not a burst', () => {
    const pace = sut();
    for (let second = 0; second <= 12; second++) {
      for (let i = 0; i < 100; i++) pace.arrived();
      expect({ second, limit: pace.limit() }).toEqual({ second, limit: second <= 10 ? 1 : 4 });
      now += 1_000;
    }
    now += 2_000;
    for (let i = 0; i < 100; i++) pace.arrived();
    expect(pace.limit()).toBe(1);
  });

  /** Runs `body` with fake timers (`setImmediate` real, for `flush`). */
  const withFakeTimers = async (body: () => Promise<void>) => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      await body();
    } finally {
      jest.useRealTimers();
    }
  };
  /** More than a second without deliveries: the burst is over, and the pace looks again. */
  const calm = async () => {
    now += 1_100;
    jest.advanceTimersByTime(100);
    await flush();
  };

  it('holds processings beyond the limit until a turn is given back, and starts the waiting ones when the burst is over', () =>
    withFakeTimers(async () => {
      const pace = sut();
      for (let i = 0; i < 200; i++) pace.arrived();
      const started: number[] = [];
      const releases: Array<() => void> = [];
      for (let i = 0; i < 4; i++) void pace.acquire().then((release) => (started.push(i), releases.push(release)));
      await flush();
      expect(started).toEqual([0]);
      releases[0]!();
      await flush();
      expect(started).toEqual([0, 1]);
      await calm();
      expect(started).toEqual([0, 1, 2, 3]);
    }));

  it('with no turn during intake, starts nothing while a burst arrives, and everything waiting once it is over', () =>
    withFakeTimers(async () => {
      const pace = sut(0);
      const started: number[] = [];
      for (let i = 0; i < 200; i++) pace.arrived();
      for (let i = 0; i < 6; i++) void pace.acquire().then(() => started.push(i));
      for (let tick = 0; tick < 5; tick++) {
        now += 200;
        for (let i = 0; i < 20; i++) pace.arrived();
        jest.advanceTimersByTime(200);
        await flush();
      }
      expect(started).toEqual([]);
      await calm();
      expect(started).toEqual([0, 1, 2, 3]);
    }));
});
