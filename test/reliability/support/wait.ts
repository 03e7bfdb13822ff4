import { until } from '@erp/testing';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it is true; throws naming `what` when the time is up. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  await until(check, timeoutMs, 100, what);
}
