import { Random, mulberry32 } from './random';

describe('the seeded random', () => {
  it('draws the mulberry32 sequence of its seed, so recorded seeds replay the same runs and data', () => {
    const sut = new Random(42);
    expect([sut.next(), sut.next(), sut.next()]).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
    const next = mulberry32(42);
    expect([next(), next(), next()]).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
  });

  it('forks by label into a generator of its own', () => {
    const forked = new Random(7).fork('sales');
    expect([forked.int(1, 100), forked.int(1, 100), forked.skewed(1000)]).toEqual([55, 10, 372]);
    expect(new Random(7).fork('sales').next()).not.toBe(new Random(7).fork('returns').next());
  });

  it('keeps ints within both bounds and picks every item', () => {
    const sut = new Random(1);
    const ints = Array.from({ length: 2_000 }, () => sut.int(-2, 3));
    expect(new Set(ints)).toEqual(new Set([-2, -1, 0, 1, 2, 3]));
    expect(new Set(Array.from({ length: 200 }, () => sut.pick(['a', 'b', 'c'])))).toEqual(new Set(['a', 'b', 'c']));
  });
});
