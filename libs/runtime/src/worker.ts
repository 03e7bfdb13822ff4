/**
 * What runs on its own for the life of the process (a sweeper, a relay, a dispatcher), built by
 * `startPeriodic` or `startLoop` and handed to `ctx.addWorker`, which stops it with the workers.
 */
export interface Worker {
  /** Runs no more and waits for the work in progress to end. */
  stop(): Promise<void>;
  /** Work is waiting: look for it now, not at the next scheduled run. */
  nudge?(): void;
}
