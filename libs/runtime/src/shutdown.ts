import type { AppLogger } from './logger';

/**
 * The phases of a stop, in the order they run: what takes work in (servers, consumers) first, so
 * nothing new starts; then the workers, which may still write and publish; then the bus (its drain
 * waits for what is in flight); then the databases; the ops server last, so /readyz answers 503
 * until the very end.
 */
export const SHUTDOWN_PHASES = ['intake', 'workers', 'bus', 'databases', 'ops'] as const;
export type ShutdownPhase = (typeof SHUTDOWN_PHASES)[number];

export interface Shutdown {
  /** Registers a stop step in `phase`. Within a phase, steps run newest first. */
  add(phase: ShutdownPhase, name: string, step: () => Promise<void>): void;
  /**
   * Runs every step, phase by phase, one at a time; a step that fails is logged and the next one
   * runs. Resolves false when `timeoutMs` passed first (the steps still run to their end). Every
   * call after the first answers the first call's stop.
   */
  run(): Promise<boolean>;
}

export function createShutdown(logger: Pick<AppLogger, 'warn'>, timeoutMs: number): Shutdown {
  const steps = new Map<ShutdownPhase, Array<{ name: string; step: () => Promise<void> }>>(SHUTDOWN_PHASES.map((phase) => [phase, []]));
  let stopped: Promise<boolean> | undefined;
  const runSteps = async () => {
    for (const phase of SHUTDOWN_PHASES) {
      for (const { name, step } of [...steps.get(phase)!].reverse()) {
        try {
          await step();
        } catch (err) {
          logger.warn({ err, step: name }, 'stop step failed');
        }
      }
    }
  };
  return {
    add(phase, name, step) {
      steps.get(phase)!.push({ name, step });
    },
    run: () => (stopped ??= Promise.race([runSteps().then(() => true), delay(timeoutMs).then(() => false)])),
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
