import type { BusOptions } from '@erp/bus';
import { z } from 'zod';

/** Environment every service reads. Services extend it with their own keys. */
export const BaseConfig = z.object({
  NODE_ENV: z.string().default('development'),
  /**
   * Check the replies handlers give as JSON text against their contract before they leave
   * (`true`/`false`); by default on everywhere but under NODE_ENV=production, where the tests
   * and development runs have already held them to it.
   */
  VALIDATE_REPLIES: z.enum(['true', 'false']).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/erp'),
  /**
   * A read-only endpoint of the same database (a replica: CloudNativePG's `-ro` Service) for the
   * reads that may lag: exports read their snapshot there when it gives an exact hand-over cursor.
   */
  DATABASE_URL_READ: z.string().url().optional(),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /** A new Postgres connection that takes longer fails as unavailable (503 with Retry-After), never a hang. */
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /**
   * Server-side limit of one statement; the client gives up on an answer 5 s past it (a server that
   * is gone without a reset) and drops the connection.
   */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  /**
   * The service's bus identity and password when NATS requires them (the chart gives the service's
   * name and its password from a Secret); unset, the plain local NATS of `npm start` and the tests.
   */
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  /** TLS to NATS: the CA that signed the servers' certificates (the chart mounts it from a Secret). */
  NATS_TLS_CA_FILE: z.string().min(1).optional(),
  /** The client certificate and key, for servers that verify clients (both or neither). */
  NATS_TLS_CERT_FILE: z.string().min(1).optional(),
  NATS_TLS_KEY_FILE: z.string().min(1).optional(),
  /** Prefix of every NATS subject (and of the JetStream stream name). */
  SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('erp'),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Port of /healthz, /readyz and /metrics; 0 picks a free port. */
  OPS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** Address the HTTP servers (ops, and the gateway's API) listen on; every interface when unset, as in a container. */
  BIND_ADDRESS: z.string().min(1).optional(),
  /** Deadline for a graceful stop; Kubernetes' termination grace period must be longer. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(25_000),
  /** The events stream: copies on distinct JetStream servers (3 in production); the migration step sets them, services check them at start. */
  JETSTREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** Bytes the events stream may hold; -1 for no limit. Full, it refuses events and the outboxes hold them. */
  JETSTREAM_MAX_BYTES: z.coerce.number().int().min(-1).default(-1),
  JETSTREAM_MAX_AGE_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .default(7 * 24 * 3600_000),
  /** How long a finished export's file is kept (the interface promises 7 days); the store keeps files a day longer at most. */
  EXPORT_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(7 * 24 * 3600_000),
  /**
   * Transactions that read one export's rows at once in the service that owns them, all on the
   * export's snapshot; each holds one of the service's `DB_POOL_MAX` connections while it runs.
   * Two keep Postgres busy while the service compresses and stores what they read (on two cores,
   * 94 % of psql's rate against 72 % with one); more help where Postgres has cores to spare.
   */
  EXPORT_READERS: z.coerce.number().int().min(1).max(8).default(2),
  /**
   * An export is background work: while its owner answers other requests, its readers pause after
   * each batch so that together they read 1 / (1 + this) of the time one reader would (0: an
   * export always runs at full speed).
   */
  EXPORT_YIELD_TO_REQUESTS: z.coerce.number().min(0).max(20).default(1),
  /** Bytes the export files' object store may hold (-1: no limit); set with the stream's by the migration step. */
  EXPORT_STORE_MAX_BYTES: z.coerce.number().int().min(-1).default(-1),
  /** Deduplication of re-published outbox rows; longer than any gap between a publish and its retry. */
  JETSTREAM_DUPLICATE_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(10 * 60_000),
});
export type BaseConfig = z.output<typeof BaseConfig>;

/** How this process reaches NATS, from its configuration: servers, its identity, TLS, the events stream's settings. */
export function natsConnection(config: BaseConfig): Pick<BusOptions, 'servers' | 'credentials' | 'tls' | 'stream' | 'exportStore'> {
  if (Boolean(config.NATS_TLS_CERT_FILE) !== Boolean(config.NATS_TLS_KEY_FILE))
    throw new Error('Invalid configuration: NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together');
  if (config.NATS_TLS_CERT_FILE && !config.NATS_TLS_CA_FILE)
    throw new Error('Invalid configuration: NATS_TLS_CERT_FILE needs NATS_TLS_CA_FILE, the CA the server is verified against');
  return {
    servers: config.NATS_URL,
    ...(config.NATS_USER ? { credentials: { user: config.NATS_USER, password: config.NATS_PASSWORD ?? '' } } : {}),
    ...(config.NATS_TLS_CA_FILE
      ? {
          tls: {
            caFile: config.NATS_TLS_CA_FILE,
            ...(config.NATS_TLS_CERT_FILE ? { certFile: config.NATS_TLS_CERT_FILE, keyFile: config.NATS_TLS_KEY_FILE } : {}),
          },
        }
      : {}),
    stream: {
      replicas: config.JETSTREAM_REPLICAS,
      maxBytes: config.JETSTREAM_MAX_BYTES,
      maxAgeMs: config.JETSTREAM_MAX_AGE_MS,
      duplicateWindowMs: config.JETSTREAM_DUPLICATE_WINDOW_MS,
    },
    // A file no job points to (an attempt that lost its job) goes a day after its expiry at the latest.
    exportStore: {
      replicas: config.JETSTREAM_REPLICAS,
      maxBytes: config.EXPORT_STORE_MAX_BYTES,
      maxAgeMs: config.EXPORT_TTL_MS + 24 * 3600_000,
    },
  };
}

/**
 * What a service's own config keys default to: their `.default()`s, as an unset environment parses
 * them. The schema is the one place a default is written; this object serves a service given a
 * plain BaseConfig (the test stack), which takes the rest from here.
 */
export function configDefaults<S extends z.ZodRawShape>(keys: S): z.output<z.ZodObject<S>> {
  return z.object(keys).parse({});
}

/**
 * Parses the environment once into a frozen object. Throws one readable error naming every bad
 * key (values are never echoed: some are secrets).
 */
export function loadConfig<S extends z.ZodType<BaseConfig>>(schema: S, env: NodeJS.ProcessEnv = process.env): Readonly<z.output<S>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return Object.freeze(parsed.data) as Readonly<z.output<S>>;
}
