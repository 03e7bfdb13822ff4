import { GatheredWrites } from './gatherer';

/** An error as pg reports a statement Postgres refused or a connection it lost, by SQLSTATE. */
const pgError = (code: string) => Object.assign(new Error(`refused (${code})`), { code });
const settled = (p: Promise<void>) =>
  p.then(
    () => 'written',
    (err: Error) => err.message,
  );

describe('GatheredWrites', () => {
  it('writes what arrives within the window in one write, and what arrives during it in the next', async () => {
    const writes: string[][] = [];
    let release: () => void = () => undefined;
    const sut = new GatheredWrites<string>({
      windowMs: 20,
      maxBatch: 10,
      write: async (items) => {
        writes.push(items);
        if (writes.length === 1) await new Promise<void>((r) => (release = r));
      },
    });
    const first = [sut.add('a'), sut.add('b')];
    await new Promise((r) => setTimeout(r, 40));
    const second = [sut.add('c'), sut.add('d')];
    expect(writes).toEqual([['a', 'b']]);
    release();
    await Promise.all([...first, ...second]);
    expect(writes).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  /** A writer that records each write and throws what `refuse` answers for its items. */
  const refusing = (refuse: (items: string[]) => Error | undefined) => {
    const writes: string[][] = [];
    const sut = new GatheredWrites<string>({
      windowMs: 5,
      maxBatch: 10,
      write: async (items) => {
        writes.push(items);
        const err = refuse(items);
        if (err) throw err;
      },
    });
    return { writes, outcomes: (items: string[]) => Promise.all(items.map((item) => settled(sut.add(item)))) };
  };

  it('writes a refused batch again one item at a time: the refused item fails alone', async () => {
    const { writes, outcomes } = refusing((items) => (items.includes('bad') ? pgError('22003') : undefined));
    expect(await outcomes(['a', 'bad', 'c'])).toEqual(['written', 'refused (22003)', 'written']);
    expect(writes).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('fails every item of a batch when the database is away, without trying each', async () => {
    const { writes, outcomes } = refusing(() => pgError('57P01'));
    expect(await outcomes(['a', 'b'])).toEqual(['refused (57P01)', 'refused (57P01)']);
    expect(writes).toEqual([['a', 'b']]);
  });
});
