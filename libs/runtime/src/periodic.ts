import type { AppLogger } from './logger';
import type { Worker } from './worker';

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
): Worker {
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

/**
 * Runs `task` in a loop: after each run it waits the milliseconds the run answered (0: again at
 * once), unless it is nudged meanwhile, which ends the wait, or was nudged during the run, which
 * skips it. A failed run is logged and tried again after `retryMs`. Runs never overlap, and the
 * timer does not keep the process alive.
 */
export function startLoop(
  name: string,
  options: { retryMs: number; logger: Pick<AppLogger, 'warn'> },
  task: (stopped: () => boolean) => Promise<number>,
): Required<Worker> {
  let stopped = false;
  let nudged = false;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  const loop = (async () => {
    while (!stopped) {
      nudged = false;
      let waitMs: number;
      try {
        waitMs = await task(() => stopped);
      } catch (err) {
        options.logger.warn({ err }, `${name} failed; will retry`);
        waitMs = options.retryMs;
      }
      if (!stopped && !nudged && waitMs > 0) await pause(waitMs);
    }
  })();
  return {
    nudge() {
      nudged = true;
      wake?.();
    },
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
