import { z } from 'zod';
import { BaseConfig } from '@erp/runtime';

export const GatewayConfig = BaseConfig.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  REDIS_URL: z.string().min(1).default('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key, so environments and test runs can share one Redis. */
  REDIS_KEY_PREFIX: z.string().min(1).default('erp'),
  /** How long a verified API key is trusted without asking Postgres; revocations also clear it at once. */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(10_000),
  /** How long an unknown API key is remembered as unknown (by hash), sparing Postgres a query per repeated bad key. */
  AUTH_NEGATIVE_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /** Failed authentications one client address may make per window; past it, 429 until the window ends. */
  AUTH_FAILURES_PER_WINDOW: z.coerce.number().int().min(1).default(100),
  AUTH_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(300),
  /**
   * Proxies in front of the gateway whose X-Forwarded-For is believed (Express `trust proxy` hop
   * count): behind an ingress controller, 1, or every client would share the controller's address.
   */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0),
  RATE_LIMIT_STANDARD: z.coerce.number().int().min(1).default(1000),
  RATE_LIMIT_DATE_FILTERED: z.coerce.number().int().min(1).default(2000),
  /** Requests one gateway process serves at once; past it, 503 with Retry-After at once instead of a queue. */
  MAX_INFLIGHT_REQUESTS: z.coerce.number().int().min(1).default(512),
  /** How often the answers of `Idempotency-Key` requests older than 24 hours are deleted. */
  IDEMPOTENCY_PURGE_INTERVAL_MS: z.coerce.number().int().min(10).default(600_000),
  /** How often the API keys' last uses (hour and client address) are written, in one statement. */
  API_KEY_USAGE_FLUSH_MS: z.coerce.number().int().min(10).default(30_000),
  /** How often keys expiring within seven days are looked for, to announce each once (`api_key.expiring`). */
  API_KEY_EXPIRY_SWEEP_MS: z.coerce.number().int().min(10).default(3_600_000),
});
export type GatewayConfig = z.output<typeof GatewayConfig>;
