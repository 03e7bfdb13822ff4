import { decision, hasDateFilters, limitFor, windowAt } from './rate-limit';

describe('hourly rate-limit rule', () => {
  it('uses fixed UTC hours, whatever the minute of the first request', () => {
    expect(windowAt(Date.UTC(2026, 0, 1, 14, 0, 0))).toEqual({
      start: Date.UTC(2026, 0, 1, 14) / 1000,
      reset: Date.UTC(2026, 0, 1, 15) / 1000,
    });
    expect(windowAt(Date.UTC(2026, 0, 1, 14, 59, 59, 999)).reset).toBe(Date.UTC(2026, 0, 1, 15) / 1000);
    expect(windowAt(Date.UTC(2026, 0, 1, 23, 30)).reset).toBe(Date.UTC(2026, 0, 2, 0) / 1000);
  });

  it('raises the limit only when both date filters are present and not empty', () => {
    const rule = { standard: 1000, withDateFilters: 2000 };
    expect(limitFor(rule, hasDateFilters({ fecha_inicio: '2026-01-01', fecha_fin: '2026-01-31' }))).toBe(2000);
    expect(limitFor(rule, hasDateFilters({ fecha_inicio: '2026-01-01' }))).toBe(1000);
    expect(limitFor(rule, hasDateFilters({ fecha_inicio: '2026-01-01', fecha_fin: '' }))).toBe(1000);
    expect(limitFor(rule, hasDateFilters({ fecha_inicio: ['a', 'b'], fecha_fin: '2026-01-31' }))).toBe(1000);
  });

  it('never reports negative remaining requests', () => {
    expect(decision(false, 1000, 1000, false, windowAt(0), false).remaining).toBe(0);
    expect(decision(false, 1500, 1000, false, windowAt(0), false).remaining).toBe(0);
  });
});
