import { z } from 'zod';
import { BaseConfig, configDefaults } from '@erp/runtime';

const Flag = z.enum(['true', 'false']).transform((v) => v === 'true');

/** The subscriptions service's own keys; each default is written here only. */
const subscriptionsKeys = {
  /** Loopback, private and link-local receivers are refused unless true (local runs and tests). */
  EVENTS_ALLOW_PRIVATE_URLS: Flag.default(false),
  /** Plain http receivers are refused unless true: https only in production. */
  EVENTS_ALLOW_HTTP: Flag.default(false),
  /** Pause before each retry, by failed attempt; the last repeats until the window is spent. */
  EVENTS_RETRY_SCHEDULE_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'comma-separated milliseconds')
    .default('5000,300000,1800000,7200000,18000000,36000000')
    .transform((v): readonly number[] => v.split(',').map(Number)),
  /** A subscription whose oldest owed delivery has failed this long is disabled (3 days). */
  EVENTS_RETRY_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(3 * 24 * 3600_000),
  /** A receiver must answer 2xx within this. */
  EVENTS_DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Deliveries in flight at once in this process, overall and per subscription. */
  EVENTS_MAX_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
  EVENTS_MAX_PER_SUBSCRIPTION: z.coerce.number().int().min(1).max(100).default(4),
  /** How often the dispatcher looks for deliveries that are due. */
  EVENTS_POLL_MS: z.coerce.number().int().min(20).default(500),
  /** Days the event log keeps an event (the feed and replays reach this far back). */
  EVENTS_RETENTION_DAYS: z.coerce.number().int().min(1).max(365).default(30),
};

export const SubscriptionsConfig = BaseConfig.extend(subscriptionsKeys);
export type SubscriptionsConfig = z.output<typeof SubscriptionsConfig>;

/** Defaults of the service's own keys, also used when it is given a plain BaseConfig. */
export const SUBSCRIPTIONS_DEFAULTS = configDefaults(subscriptionsKeys);

/** A BaseConfig (as the test stack builds it) or a full SubscriptionsConfig: missing keys take their defaults. */
export type SubscriptionsConfigInput = BaseConfig & Partial<Omit<SubscriptionsConfig, keyof BaseConfig>>;

export function withSubscriptionsDefaults(config: Readonly<SubscriptionsConfigInput>): Readonly<SubscriptionsConfig> {
  return Object.freeze({ ...SUBSCRIPTIONS_DEFAULTS, ...config });
}
