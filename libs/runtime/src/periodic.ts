import type { AppLogger } from './logger';

/** A task run again `intervalMs` after each run ends, until stopped. */
export interface PeriodicTask {
  /** Runs no more and waits for a run in progress to end. */
  stop(): Promise<void>;
}

/**
 * Runs `task` every `intervalMs` (measured from the end of the previous run, so runs never
 * overlap), logging a failed run and trying again at the next tick. The timer does not keep the
 * process alive. `task` receives `stopped()`, to end a long run early when the service stops.
 */
export function startPeriodic(
  name: string,
  intervalMs: number,
  logger: Pick<AppLogger, 'warn'>,
  task: (stopped: () => boolean) => Promise<unknown>,
): PeriodicTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = task(() => stopped)
        .catch((err: unknown) => logger.warn({ err }, `${name} failed; will retry`))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
