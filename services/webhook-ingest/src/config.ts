import { z } from 'zod';
import { BaseConfig, configDefaults } from '@erp/runtime';

/** Webhook-ingest's own keys; each default is written here only (WEBHOOK_CONCURRENCY's by `withConcurrency`). */
const webhookIngestKeys = {
  /** Deliveries processed at once by one replica; unset, `defaultConcurrency` of the pool. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(64).optional(),
  /** Attempts of a delivery that keeps failing for a transient reason before it is kept as failed. */
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(30),
  /**
   * How long the first delivery of a batch waits for others before it is stored (0: those of the
   * same turn of the event loop). Besides, deliveries arriving while `WEBHOOK_BATCHES_IN_FLIGHT`
   * batches are being stored gather for the next one: a burst is stored a few milliseconds' worth at a time.
   */
  WEBHOOK_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(1000).default(0),
  /** Most deliveries stored in one statement. */
  WEBHOOK_BATCH_MAX: z.coerce.number().int().min(1).max(1000).default(200),
  /** Batches stored at once; while that many are, arriving deliveries gather for the next. */
  WEBHOOK_BATCHES_IN_FLIGHT: z.coerce.number().int().min(1).max(16).default(2),
  /**
   * Most new-order deliveries of one integration processed together, their sales made by one
   * `sales.batch.create` (at most its 100); 1 processes each delivery alone.
   */
  WEBHOOK_GROUP_MAX: z.coerce.number().int().min(1).max(100).default(100),
  /** How long the first delivery waits for others before its group is formed (a full group is formed at once). */
  WEBHOOK_GROUP_WINDOW_MS: z.coerce.number().int().min(0).max(1000).default(20),
  /** Groups processed at once by one replica; while that many are, arriving deliveries gather for the next. */
  WEBHOOK_GROUPS_IN_FLIGHT: z.coerce.number().int().min(1).max(8).default(2),
  /**
   * How long a token's integration (or its absence) is trusted without asking Postgres (changes
   * made in this replica, or announced by another, apply at once), and a company's context without
   * asking the gateway (a company deactivated stops processing within it).
   */
  WEBHOOK_CACHE_TTL_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  /** Deliveries per second received by this replica above which processing slows to `WEBHOOK_CONCURRENCY_DURING_INTAKE`. */
  WEBHOOK_INTAKE_BUSY_PER_SECOND: z.coerce.number().int().min(1).default(50),
  /**
   * Deliveries processed at once while deliveries arrive faster than `WEBHOOK_INTAKE_BUSY_PER_SECOND`
   * (for 10 s at most). 0: none, so a burst is accepted with every core, then processed at full speed.
   */
  WEBHOOK_CONCURRENCY_DURING_INTAKE: z.coerce.number().int().min(0).max(64).default(0),
  /**
   * How long after its last event a delivery still waiting is given a new one: past the whole
   * retry schedule (30 attempts take about 13 minutes), so only an event lost for good is replaced.
   */
  WEBHOOK_REQUEUE_AFTER_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(20 * 60_000),
  /** How often deliveries owed a new event are looked for. */
  WEBHOOK_REQUEUE_INTERVAL_MS: z.coerce.number().int().min(50).default(60_000),
  /**
   * Keys that seal the shops' credentials, from a Secret: `id:base64key[,id:base64key…]` (32-byte
   * keys; the first seals, each opens). Unset: an integration cannot be given a shop API.
   */
  PLATFORM_CREDENTIALS_KEYS: z.string().optional(),
  /**
   * The public base URL the shops deliver webhooks to (the gateway's, e.g. `https://api.example.com`):
   * our subscriptions are told apart by it and re-created at it. Unset: subscriptions are not checked.
   */
  PLATFORM_WEBHOOK_BASE_URL: z.string().url().optional(),
  /** How often each integration with a shop API reconciles its orders against the shop's. */
  PLATFORM_RECONCILE_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(5 * 60_000),
  /** How far before the last watermark each pass reads again (a shop's clock and late writes). */
  PLATFORM_RECONCILE_OVERLAP_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 60_000),
  /** How long a replica holds an integration's pass without renewing it before another may take it. */
  PLATFORM_RECONCILE_LEASE_MS: z.coerce.number().int().min(1_000).default(60_000),
  /** Integrations reconciled at once by one replica (each shop's pass runs on its own). */
  PLATFORM_RECONCILE_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** How long after a product's first stock change its push to the shops waits for more (a burst is one write). */
  PLATFORM_STOCK_PUSH_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(2_000),
  /** Products one replica takes per round of the stock push. */
  PLATFORM_STOCK_PUSH_BATCH: z.coerce.number().int().min(1).max(5_000).default(500),
  /** Longest wait for one call to a shop's API before it counts as failed. */
  PLATFORM_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
};

/**
 * Deliveries processed at once by one replica when WEBHOOK_CONCURRENCY is not set: 8, or fewer
 * when the pool is small. Each holds a database connection while its sale is made, and two stay
 * free for receiving deliveries.
 */
export function defaultConcurrency(dbPoolMax: number): number {
  return Math.max(1, Math.min(8, dbPoolMax - 2));
}

/** WEBHOOK_CONCURRENCY as set, or its default for the pool: the one place that default is applied. */
function withConcurrency<C extends { DB_POOL_MAX: number; WEBHOOK_CONCURRENCY?: number | undefined }>(
  config: C,
): C & { WEBHOOK_CONCURRENCY: number } {
  return { ...config, WEBHOOK_CONCURRENCY: config.WEBHOOK_CONCURRENCY ?? defaultConcurrency(config.DB_POOL_MAX) };
}

/** Pause before each retry of a delivery, by attempt; the last value repeats (30 attempts take about 13 minutes). */
export const WEBHOOK_RETRY_BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000] as const;

export const WebhookIngestConfig = BaseConfig.extend(webhookIngestKeys).transform(withConcurrency);
export type WebhookIngestConfig = z.output<typeof WebhookIngestConfig>;

/** Defaults of webhook-ingest's own keys, also used when the service is given a plain BaseConfig. */
export const WEBHOOK_INGEST_DEFAULTS = configDefaults(webhookIngestKeys);

/** A BaseConfig (as the test stack builds it) or a full WebhookIngestConfig: missing keys take their defaults. */
export type WebhookIngestConfigInput = BaseConfig & Partial<Omit<WebhookIngestConfig, keyof BaseConfig>>;

export function withWebhookIngestDefaults(config: Readonly<WebhookIngestConfigInput>): Readonly<WebhookIngestConfig> {
  return Object.freeze(withConcurrency({ ...WEBHOOK_INGEST_DEFAULTS, ...config }));
}
