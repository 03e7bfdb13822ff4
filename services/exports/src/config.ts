import { z } from 'zod';
import { BaseConfig } from '@erp/runtime';

export const EXPORTS_DEFAULTS = {
  /** A job whose worker has not renewed its lease for this long is taken over by another replica. */
  EXPORT_LEASE_MS: 30_000,
  /** Exports one process writes at once (each holds one snapshot open in its owner). */
  EXPORT_CONCURRENCY: 2,
  /** How often queued jobs, expired leases and expired files are looked for (a new job also wakes the worker). */
  EXPORT_POLL_MS: 1_000,
  /** Longest an owning service may take to write one file before the attempt counts as failed. */
  EXPORT_WRITE_TIMEOUT_MS: 30 * 60_000,
  /** Attempts of one export (a worker that died, an owner that failed) before it is `fallida`. */
  EXPORT_MAX_ATTEMPTS: 3,
  /** How often the recorded files are checked for ones no job points to (see the worker's `removeStrayFiles`). */
  EXPORT_ORPHAN_SWEEP_MS: 10 * 60_000,
};

export const ExportsConfig = BaseConfig.extend({
  EXPORT_LEASE_MS: z.coerce.number().int().min(500).default(EXPORTS_DEFAULTS.EXPORT_LEASE_MS),
  EXPORT_CONCURRENCY: z.coerce.number().int().min(1).max(20).default(EXPORTS_DEFAULTS.EXPORT_CONCURRENCY),
  EXPORT_POLL_MS: z.coerce.number().int().min(50).default(EXPORTS_DEFAULTS.EXPORT_POLL_MS),
  EXPORT_WRITE_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(EXPORTS_DEFAULTS.EXPORT_WRITE_TIMEOUT_MS),
  EXPORT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(EXPORTS_DEFAULTS.EXPORT_MAX_ATTEMPTS),
  EXPORT_ORPHAN_SWEEP_MS: z.coerce.number().int().min(100).default(EXPORTS_DEFAULTS.EXPORT_ORPHAN_SWEEP_MS),
});
export type ExportsConfig = z.output<typeof ExportsConfig>;

/** A BaseConfig (as the test stack builds it) or a full ExportsConfig: missing keys take their defaults. */
export type ExportsConfigInput = BaseConfig & Partial<Omit<ExportsConfig, keyof BaseConfig>>;

export function withExportsDefaults(config: Readonly<ExportsConfigInput>): Readonly<ExportsConfig> {
  return Object.freeze({ ...EXPORTS_DEFAULTS, ...config });
}
