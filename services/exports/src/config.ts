import { z } from 'zod';
import { BaseConfig, configDefaults } from '@erp/runtime';

/** The exports service's own keys; each default is written here only. */
const exportsKeys = {
  /** A job whose worker has not renewed its lease for this long is taken over by another replica. */
  EXPORT_LEASE_MS: z.coerce.number().int().min(500).default(30_000),
  /** Exports one process writes at once (each holds one snapshot open in its owner). */
  EXPORT_CONCURRENCY: z.coerce.number().int().min(1).max(20).default(2),
  /** How often queued jobs, expired leases and expired files are looked for (a new job also wakes the worker). */
  EXPORT_POLL_MS: z.coerce.number().int().min(50).default(1_000),
  /** Longest an owning service may take to write one file before the attempt counts as failed. */
  EXPORT_WRITE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(30 * 60_000),
  /** Attempts of one export (a worker that died, an owner that failed) before it is `fallida`. */
  EXPORT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  /**
   * Pause after the first failed attempt before the next; it doubles after each (with 5 attempts,
   * 5 + 10 + 20 + 40 s: an owner or database away for about a minute does not fail the export).
   */
  EXPORT_RETRY_BACKOFF_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  /** How often the recorded files are checked for ones no job points to (see the worker's `removeStrayArchivos`). */
  EXPORT_ORPHAN_SWEEP_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(10 * 60_000),
};

export const ExportsConfig = BaseConfig.extend(exportsKeys);
export type ExportsConfig = z.output<typeof ExportsConfig>;

/** Defaults of the service's own keys, also used when it is given a plain BaseConfig. */
export const EXPORTS_DEFAULTS = configDefaults(exportsKeys);

/** A BaseConfig (as the test stack builds it) or a full ExportsConfig: missing keys take their defaults. */
export type ExportsConfigInput = BaseConfig & Partial<Omit<ExportsConfig, keyof BaseConfig>>;

export function withExportsDefaults(config: Readonly<ExportsConfigInput>): Readonly<ExportsConfig> {
  return Object.freeze({ ...EXPORTS_DEFAULTS, ...config });
}
