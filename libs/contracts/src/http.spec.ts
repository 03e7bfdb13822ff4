import { DateString } from './fields';
import { PaginationQuery, paginate, queryInt } from './http';

describe('paginate', () => {
  it.each([
    [{ page: 1, per_page: 100 }, 250, { total_pages: 3, has_next: true, has_prev: false, from: 1, to: 100 }],
    [{ page: 3, per_page: 100 }, 250, { total_pages: 3, has_next: false, has_prev: true, from: 201, to: 250 }],
    [{ page: 4, per_page: 100 }, 250, { total_pages: 3, has_next: false, has_prev: true, from: null, to: null }],
    [{ page: 1, per_page: 10 }, 0, { total_pages: 0, has_next: false, has_prev: false, from: null, to: null }],
  ])('page %j of %i rows', (page, total, expected) => {
    expect(paginate(page, total)).toEqual({ current_page: page.page, per_page: page.per_page, total, ...expected });
  });
});

describe('query parameters', () => {
  it('accepts digit strings only for integers', () => {
    const sut = queryInt({ min: 1, max: 200 });
    expect(sut.parse('42')).toBe(42);
    for (const bad of ['1e2', '1.0', ' 4', '', '0x10', '201', '0']) expect(sut.safeParse(bad).success).toBe(false);
  });

  it('defaults page and per_page and caps per_page at 200', () => {
    expect(PaginationQuery.parse({})).toEqual({ page: 1, per_page: 100 });
    expect(PaginationQuery.safeParse({ per_page: '201' }).success).toBe(false);
  });

  it('accepts only real calendar dates in Y-m-d', () => {
    expect(DateString.safeParse('2028-02-29').success).toBe(true);
    // Date.UTC reads the years 0 to 99 as 1900 to 1999: these are still dates of their own years.
    for (const good of ['0002-12-31', '0004-02-29', '2000-02-29', '9999-12-31'])
      expect([good, DateString.safeParse(good).success]).toEqual([good, true]);
    for (const bad of ['0000-01-01', '0100-02-29', '1900-02-29']) expect([bad, DateString.safeParse(bad).success]).toEqual([bad, false]);
    for (const bad of ['2026-02-29', '2026-13-01', '2026-1-05', '05/01/2026', '2026-01-01T00:00:00Z']) {
      expect(DateString.safeParse(bad).success).toBe(false);
    }
  });
});
