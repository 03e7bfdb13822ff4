/** The hourly quota rule of the spec: fixed UTC hours; both date filters raise the limit. */
export interface RateLimitRule {
  standard: number;
  withDateFilters: number;
}

export interface RateWindow {
  /** Unix seconds of the start of the current UTC hour: part of the counter key. */
  start: number;
  /** Unix seconds of the next top of the hour (`X-RateLimit-Reset`). */
  reset: number;
}

export function windowAt(nowMs: number): RateWindow {
  const start = Math.floor(nowMs / 3_600_000) * 3_600;
  return { start, reset: start + 3_600 };
}

/** A request with both `fecha_inicio` and `fecha_fin` counts against the higher limit. */
export function hasDateFilters(query: Record<string, unknown>): boolean {
  return (
    typeof query.fecha_inicio === 'string' && query.fecha_inicio !== '' && typeof query.fecha_fin === 'string' && query.fecha_fin !== ''
  );
}

export function limitFor(rule: RateLimitRule, dateFiltered: boolean): number {
  return dateFiltered ? rule.withDateFilters : rule.standard;
}

export interface RateDecision {
  allowed: boolean;
  /** Requests counted in this window after this one (refused requests are not counted). */
  used: number;
  limit: number;
  limitType: 'standard' | 'with_date_filters';
  remaining: number;
  window: RateWindow;
  /** True when the count came from the per-process fallback because Redis was unreachable. */
  fallback: boolean;
}

export function decision(
  allowed: boolean,
  used: number,
  limit: number,
  dateFiltered: boolean,
  window: RateWindow,
  fallback: boolean,
): RateDecision {
  const limitType = dateFiltered ? 'with_date_filters' : 'standard';
  return { allowed, used, limit, limitType, remaining: Math.max(0, limit - used), window, fallback };
}
