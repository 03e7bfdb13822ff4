import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { apiKeySubjects, gatewayDirectorySubjects, gatewayEvents, gatewaySubjects, webhookGatewaySubjects } from '@erp/contracts';
import type { ServiceSpec } from '@erp/runtime';
import { Authenticator } from './auth/authenticator';
import { KeyUsage } from './auth/key-usage';
import type { GatewayConfig } from './config';
import { migrations } from './db/migrations';
import { GATEWAY_SCHEMA, type GatewayDb } from './db/tables';
import { adminHandlers } from './handlers/admin.handlers';
import { apiKeyHandlers } from './handlers/api-keys.handlers';
import { directoryHandlers } from './handlers/directory.handlers';
import { webhookContextHandlers } from './handlers/webhook-context.handler';
import { createApp } from './http/app';
import { DRAIN_TIMINGS, HttpDrain, type DrainTimings } from './http/drain';
import { createHttpServer } from './http/edges';
import { apiRoutes } from './http/routes';
import { FailedAuthLimiter } from './limits/failed-auth-limiter';
import { RateLimiter } from './limits/rate-limiter';
import { startIdempotenciaPurge } from './workers/idempotencia-purge.worker';
import { startKeyExpiryNotices } from './workers/key-expiry.worker';
import { startKeyUsageFlush } from './workers/key-usage-flush.worker';

export interface GatewayOptions {
  /** Clock of the rate limiter (tests move it across the top of the hour). */
  clock?: () => number;
  /** Called with the HTTP port once listening (PORT=0 picks a free one). */
  onListening?: (port: number) => void;
  /** How the HTTP server stops (tests shorten or lengthen the lame-duck period). */
  drain?: Partial<DrainTimings>;
}

export function gatewayService(config: Readonly<GatewayConfig>, options: GatewayOptions = {}): ServiceSpec<GatewayConfig, GatewayDb> {
  return {
    name: 'gateway',
    schema: GATEWAY_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, outbox, logger, metrics, onShutdown, addWorker, addReadinessCheck }) {
      const auth = new Authenticator(db, config.AUTH_CACHE_TTL_MS, config.AUTH_NEGATIVE_CACHE_TTL_MS);
      bus.serve(
        gatewaySubjects,
        adminHandlers(db, outbox, (empresaId) => auth.invalidate(empresaId)),
        { queue: 'gateway' },
      );
      bus.serve(gatewayDirectorySubjects, directoryHandlers(db), { queue: 'gateway' });
      bus.serve(
        apiKeySubjects,
        apiKeyHandlers(db, outbox, (empresaId) => auth.invalidate(empresaId)),
        { queue: 'gateway' },
      );
      const keyUsage = new KeyUsage(db);
      addWorker('key-usage', startKeyUsageFlush(keyUsage, logger.child({ component: 'key-usage' }), config.API_KEY_USAGE_FLUSH_MS));
      addWorker('key-expiry', startKeyExpiryNotices(db, outbox, logger.child({ component: 'key-expiry' }), config.API_KEY_EXPIRY_SWEEP_MS));
      bus.serve(webhookGatewaySubjects, webhookContextHandlers(db), { queue: 'gateway' });

      const credentialsChanged = gatewayEvents['events.gateway.credentials.changed'].payload;
      bus.subscribeAll('events.gateway.credentials.changed', (_subject, payload) => {
        auth.invalidate(credentialsChanged.parse(payload).empresa_id);
      });

      // Commands fail at once while Redis is unreachable (no offline queue), so the limiter falls back instead of waiting.
      const redis = new Redis(config.REDIS_URL, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: 500,
        connectTimeout: 2_000,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      });
      redis.on('error', () => undefined); // reported through the limiter's fallback log and metrics
      onShutdown('redis', async () => {
        if (redis.status === 'ready') await redis.quit().catch(() => undefined);
        redis.disconnect(); // also stops reconnection attempts to a Redis that never came back
      });
      const limiter = new RateLimiter({
        redis,
        keyPrefix: config.REDIS_KEY_PREFIX,
        rule: { standard: config.RATE_LIMIT_STANDARD, withDateFilters: config.RATE_LIMIT_DATE_FILTERED },
        logger,
        metrics,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      const authFailures = new FailedAuthLimiter({
        redis,
        keyPrefix: config.REDIS_KEY_PREFIX,
        limit: config.AUTH_FAILURES_PER_WINDOW,
        windowSeconds: config.AUTH_FAILURE_WINDOW_SECONDS,
        logger,
        metrics,
      });
      addReadinessCheck(
        'redis',
        async () => {
          await redis.ping();
          return 'ok';
        },
        { required: false },
      );

      addWorker(
        'idempotency-purge',
        startIdempotenciaPurge(db, logger.child({ component: 'idempotency-purge' }), config.IDEMPOTENCY_PURGE_INTERVAL_MS),
      );

      const app = createApp({
        bus,
        auth,
        limiter,
        authFailures,
        trustProxyHops: config.TRUST_PROXY_HOPS,
        logger,
        metrics,
        isDraining: () => drain.draining,
        maxInflight: config.MAX_INFLIGHT_REQUESTS,
        db,
        keyUsage,
        routes: apiRoutes({ standard: config.RATE_LIMIT_STANDARD, withDateFilters: config.RATE_LIMIT_DATE_FILTERED }),
      });
      const server = createHttpServer(app);
      // At most a quarter of the stop deadline in lame duck: the rest is for the answers in progress.
      const drain = new HttpDrain(server, {
        ...DRAIN_TIMINGS,
        maxMs: Math.min(DRAIN_TIMINGS.maxMs, config.SHUTDOWN_TIMEOUT_MS / 4),
        ...options.drain,
      });
      server.listen(config.PORT, config.BIND_ADDRESS);
      await new Promise<void>((resolve, reject) => {
        server.once('listening', resolve);
        server.once('error', reject);
      });
      server.keepAliveTimeout = 65_000; // above common load-balancer idle timeouts
      const port = (server.address() as AddressInfo).port;
      logger.info({ port }, 'gateway listening');
      options.onListening?.(port);
      // Last registered of the first stop phase, so the first step: answers still in progress are
      // served over NATS, which closes after.
      // Readiness says 503 from the stop's start; the drain serves what still comes, then closes
      // every connection without resetting one (see HttpDrain).
      onShutdown('http', () => drain.stop());
    },
  };
}
