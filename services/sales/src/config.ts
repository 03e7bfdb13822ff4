import { z } from 'zod';
import { BaseConfig, configDefaults } from '@erp/runtime';

/**
 * Chaos-testing hook, off in every real deployment: the process kills itself (SIGKILL, as a
 * crash would) right after inventory reserved a sale's stock, right after the sale's
 * transaction committed and before its event is published, or right after inventory applied an
 * update's stock difference and before the update committed. Tests use it to prove that stock
 * ends exactly right after a restart.
 */
export const FAULT_INJECTIONS = ['off', 'exit-after-reserve', 'exit-after-commit', 'exit-after-update-adjust'] as const;
export type FaultInjection = (typeof FAULT_INJECTIONS)[number];

/** The sales service's own keys; each default is written here only. */
const salesKeys = {
  SALES_FAULT_INJECTION: z.enum(FAULT_INJECTIONS).default('off'),
  /** How often pending return registrations are looked for, and how old one must be to have its sale squared. */
  REGISTRATION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).default(10_000),
  REGISTRATION_SQUARE_AFTER_MS: z.coerce.number().int().min(0).default(30_000),
  /** How often changes that died are looked for, and how long after one began its sale is squared (past every request timeout). */
  REVISION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).default(10_000),
  REVISION_SQUARE_AFTER_MS: z.coerce.number().int().min(0).default(60_000),
};

export const SalesConfig = BaseConfig.extend(salesKeys);
export type SalesConfig = z.output<typeof SalesConfig>;

/** Defaults of the service's own keys, also used when it is given a plain BaseConfig. */
export const SALES_DEFAULTS = configDefaults(salesKeys);

/** A BaseConfig (as the test stack builds it) or a full SalesConfig: missing keys take their defaults. */
export type SalesConfigInput = BaseConfig & Partial<Omit<SalesConfig, keyof BaseConfig>>;

export function withSalesDefaults(config: Readonly<SalesConfigInput>): Readonly<SalesConfig> {
  return Object.freeze({ ...SALES_DEFAULTS, ...config });
}
