/** Dates and timestamps as Postgres reads them, computed in UTC so no time zone shifts a day. */

const DAY_MS = 86_400_000;

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** `date` at `secondOfDay` (0–86399), as a timestamptz literal. */
export function timestampAt(date: string, secondOfDay: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + secondOfDay * 1000).toISOString();
}

export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

/** Whole days from `from` to `to`. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}
