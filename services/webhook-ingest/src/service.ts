import { webhookApiSubjects, webhookSubjects } from '@erp/contracts';
import { registerCounter, registerOutcomeCounter, registerSnapshotGauges, type ServiceSpec } from '@erp/runtime';
import { WEBHOOK_RETRY_BACKOFF_MS, withWebhookIngestDefaults, type WebhookIngestConfig, type WebhookIngestConfigInput } from './config';
import { startDeliveryConsumer } from './consumers/delivery-received.consumer';
import { migrations } from './db/migrations';
import { entregaBacklog } from './db/entrega.repository';
import { parseKeyring } from './domain/credentials';
import { integrationsHandlers } from './handlers/integrations.handlers';
import type { StockPushDeps } from './flows/push-stock.flow';
import type { ReconcileDeps } from './flows/reconcile.flow';
import { startShopSync, type ShopSync } from './shop-sync';
import { WEBHOOK_INGEST_SCHEMA, type WebhookDb } from './db/tables';
import { DeliveryGrouper } from './workers/delivery-grouper.worker';
import { EntregaBatcher } from './workers/entrega-batcher.worker';
import { startEntregaRequeue } from './workers/entrega-requeue.worker';
import { IntakePace } from './workers/intake-pace.worker';
import { IntegracionCache } from './workers/integracion-cache.worker';
import { adminHandlers } from './handlers/admin.handlers';
import { receiveHandler } from './handlers/receive.handler';
import type { ProcessingDeps } from './flows/process-pedido.flow';
import { gatewayContexts } from './ports/gateway.port';
import { busCatalog, busInventory } from './ports/inventory.port';
import { busReturns } from './ports/returns.port';
import { busSales } from './ports/sales.port';

export interface WebhookIngestOptions {
  /** Replaces the services processing talks to (tests). */
  deps?: Partial<ProcessingDeps>;
  /** Replaces the shops' clients (tests). */
  openTienda?: ReconcileDeps['openTienda'];
  openStockTienda?: StockPushDeps['openTienda'];
}

export function webhookIngestService(
  input: Readonly<WebhookIngestConfigInput>,
  options: WebhookIngestOptions = {},
): ServiceSpec<WebhookIngestConfig, WebhookDb> {
  const config = withWebhookIngestDefaults(input);
  return {
    name: 'webhook-ingest',
    schema: WEBHOOK_INGEST_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, outbox, metrics, logger, addWorker }) {
      // Refused at start, not at the first integration that needs it.
      const keyring = parseKeyring(config.PLATFORM_CREDENTIALS_KEYS);
      registerSnapshotGauges(
        metrics,
        {
          recibidas: { name: 'erp_webhook_deliveries_pending', help: 'Stored platform deliveries not processed yet' },
          fallidas: { name: 'erp_webhook_deliveries_failed', help: 'Platform deliveries kept as failed, waiting for a fix and a replay' },
          oldestAgeSeconds: {
            name: 'erp_webhook_oldest_pending_age_seconds',
            help: 'Age of the oldest stored delivery not processed yet (0 when none)',
          },
        },
        () => entregaBacklog(db),
      );
      const processed = registerOutcomeCounter(metrics, {
        name: 'erp_webhook_deliveries_processed_total',
        help: 'Platform deliveries processed, by outcome (procesada, ignorada, fallida = kept with its reason)',
        label: 'outcome',
        outcomes: ['procesada', 'ignorada', 'fallida'],
      });
      const nudge = () => outbox.nudge();
      const integraciones = new IntegracionCache(db, config.WEBHOOK_CACHE_TTL_MS);
      const entregas = new EntregaBatcher(db, {
        windowMs: config.WEBHOOK_BATCH_WINDOW_MS,
        maxBatch: config.WEBHOOK_BATCH_MAX,
        maxInFlight: config.WEBHOOK_BATCHES_IN_FLIGHT,
        onStored: nudge,
      });
      const pace = new IntakePace({
        concurrency: config.WEBHOOK_CONCURRENCY,
        concurrencyDuringIntake: config.WEBHOOK_CONCURRENCY_DURING_INTAKE,
        busyPerSecond: config.WEBHOOK_INTAKE_BUSY_PER_SECOND,
      });
      // Every replica hears a change of integrations made by another (the one that made it applied it already).
      bus.subscribeAll('events.webhooks.integration.changed', () => integraciones.invalidate());
      let shops: ShopSync | undefined;
      bus.serve(
        webhookSubjects,
        {
          'webhooks.receive': receiveHandler({ integraciones, entregas, onReceived: () => pace.arrived() }),
          ...adminHandlers(db, {
            onEnqueued: nudge,
            onIntegracionChanged: () => integraciones.invalidate(),
            keyring,
            shops: () => shops!,
          }),
        },
        { queue: 'webhook-ingest' },
      );
      bus.serve(webhookApiSubjects, integrationsHandlers(db), { queue: 'webhook-ingest' });
      const deps: ProcessingDeps = {
        sales: busSales(bus),
        catalog: busCatalog(bus),
        inventory: busInventory(bus),
        returns: busReturns(bus),
        context: gatewayContexts(bus, config.WEBHOOK_CACHE_TTL_MS),
        ...options.deps,
      };
      const groups = registerCounter(metrics, {
        name: 'erp_webhook_delivery_groups_total',
        help: 'Groups of new-order deliveries processed together (their sales made by one sales.batch.create)',
      });
      const grouped = registerCounter(metrics, {
        name: 'erp_webhook_deliveries_grouped_total',
        help: 'Deliveries finished in a group; the rest of each group was processed alone',
      });
      const grouper = new DeliveryGrouper(
        db,
        deps,
        {
          maxGroup: config.WEBHOOK_GROUP_MAX,
          windowMs: config.WEBHOOK_GROUP_WINDOW_MS,
          maxInFlight: config.WEBHOOK_GROUPS_IN_FLIGHT,
          pace,
          onGroup: (_size, finished) => {
            groups();
            grouped(finished);
          },
        },
        logger.child({ component: 'delivery-grouper' }),
      );
      await startDeliveryConsumer(db, bus, deps, {
        // Deliveries waiting for their group hold no connection: enough are taken to fill the groups under way.
        concurrency: config.WEBHOOK_CONCURRENCY + config.WEBHOOK_GROUP_MAX * config.WEBHOOK_GROUPS_IN_FLIGHT,
        grouper,
        pace,
        backoffMs: WEBHOOK_RETRY_BACKOFF_MS,
        maxDeliver: config.WEBHOOK_MAX_ATTEMPTS,
        onProcessed: (outcome) => outcome !== 'omitida' && processed(outcome),
      });
      const requeued = registerCounter(metrics, {
        name: 'erp_webhook_deliveries_requeued_total',
        help: 'Stored deliveries given a new event because theirs never settled them (an event lost by the stream)',
      });
      addWorker(
        'delivery-requeue',
        startEntregaRequeue({
          db,
          logger: logger.child({ component: 'delivery-requeue' }),
          intervalMs: config.WEBHOOK_REQUEUE_INTERVAL_MS,
          afterMs: config.WEBHOOK_REQUEUE_AFTER_MS,
          onRequeued: (n) => {
            requeued(n);
            nudge();
          },
        }),
      );

      shops = await startShopSync({
        db,
        bus,
        metrics,
        logger,
        addWorker,
        config,
        keyring,
        processing: deps,
        onStored: nudge,
        openTienda: options.openTienda,
        openStockTienda: options.openStockTienda,
      });
    },
  };
}
