import { startPeriodic, type AppLogger, type Worker } from '@erp/runtime';
import type { KeyUsage } from '../auth/key-usage';

/** Writes the keys' last uses every `intervalMs`, and once more when the gateway stops. */
export function startKeyUsageFlush(usage: KeyUsage, logger: AppLogger, intervalMs: number): Worker {
  const task = startPeriodic('API key usage flush', intervalMs, logger, async () => {
    await usage.flush();
  });
  return {
    ...task,
    stop: async () => {
      await task.stop();
      await usage.flush().catch((err: unknown) => logger.warn({ err }, 'the last API key uses could not be written'));
    },
  };
}
