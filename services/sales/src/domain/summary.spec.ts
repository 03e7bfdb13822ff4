import { pageStart } from './summary';

describe('pageStart', () => {
  const days = [
    { fecha: '2026-03-03', cantidad: 2 },
    { fecha: '2026-03-02', cantidad: 3 },
    { fecha: '2026-03-01', cantidad: 1 },
  ];

  it('starts the first page on the first day, skipping nothing', () => {
    expect(pageStart(days, 0)).toEqual({ total: 6, start: { fecha: '2026-03-03', skip: 0 } });
  });

  it('skips the whole days before the page and counts the rest within its first day', () => {
    expect(pageStart(days, 2)).toEqual({ total: 6, start: { fecha: '2026-03-02', skip: 0 } });
    expect(pageStart(days, 4)).toEqual({ total: 6, start: { fecha: '2026-03-02', skip: 2 } });
    expect(pageStart(days, 5)).toEqual({ total: 6, start: { fecha: '2026-03-01', skip: 0 } });
  });

  it('has no start past the last sale, and still counts every sale', () => {
    expect(pageStart(days, 6)).toEqual({ total: 6 });
    expect(pageStart([], 0)).toEqual({ total: 0 });
  });
});
