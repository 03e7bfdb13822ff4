import { z } from 'zod';
import { BaseConfig } from '@erp/runtime';

/** Defaults of webhook-ingest's own keys, also used when the service is given a plain BaseConfig. */
export const WEBHOOK_INGEST_DEFAULTS = {
  /** Deliveries processed at once by one replica (each holds a database connection while it runs). */
  WEBHOOK_CONCURRENCY: 3,
  /** Attempts of a delivery that keeps failing for a transient reason before it is kept as failed. */
  WEBHOOK_MAX_ATTEMPTS: 30,
} as const;

/** Pause before each retry of a delivery, by attempt; the last value repeats (about 10 minutes in all). */
export const WEBHOOK_RETRY_BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000] as const;

export const WebhookIngestConfig = BaseConfig.extend({
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(WEBHOOK_INGEST_DEFAULTS.WEBHOOK_CONCURRENCY),
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(WEBHOOK_INGEST_DEFAULTS.WEBHOOK_MAX_ATTEMPTS),
});
export type WebhookIngestConfig = z.output<typeof WebhookIngestConfig>;

/** A BaseConfig (as the test stack builds it) or a full WebhookIngestConfig: missing keys take their defaults. */
export type WebhookIngestConfigInput = BaseConfig & Partial<Omit<WebhookIngestConfig, keyof BaseConfig>>;

export function withWebhookIngestDefaults(config: Readonly<WebhookIngestConfigInput>): Readonly<WebhookIngestConfig> {
  return Object.freeze({ ...WEBHOOK_INGEST_DEFAULTS, ...config });
}
