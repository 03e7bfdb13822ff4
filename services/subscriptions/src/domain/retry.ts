/** Pause before the next attempt after `failures` failed ones: the schedule's entry, the last repeating. */
export function retryDelayMs(schedule: readonly number[], failures: number): number {
  return schedule[Math.min(Math.max(failures, 1), schedule.length) - 1] ?? 60_000;
}

/** Whether a subscription failing since `firstFailure` has used up its retry window. */
export function retryWindowSpent(firstFailure: Date, now: Date, windowMs: number): boolean {
  return now.getTime() - firstFailure.getTime() >= windowMs;
}
