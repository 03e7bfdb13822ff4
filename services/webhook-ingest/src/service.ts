import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { OutboxRelay } from '@erp/bus';
import { webhookApiSubjects, webhookSubjects } from '@erp/contracts';
import { registerCounter, registerOutcomeCounter, registerSnapshotGauges, type ServiceSpec } from '@erp/runtime';
import { WEBHOOK_RETRY_BACKOFF_MS, withWebhookIngestDefaults, type WebhookIngestConfig, type WebhookIngestConfigInput } from './config';
import { startDeliveryConsumer } from './consumers/delivery-received.consumer';
import { migrations } from './db/migrations';
import { entregaBacklog } from './db/entrega.repository';
import { reconciledIntegrationIds, reconciliationHealth } from './db/conciliacion.repository';
import { parseKeyring } from './domain/credentials';
import { integrationsHandlers } from './handlers/integrations.handlers';
import { DEFAULT_CALL_POLICY } from './ports/shops';
import { startReconciler, type Reconciler } from './workers/reconcile.worker';
import { startStockChangedConsumer } from './consumers/stock-changed.consumer';
import { oldestOwedStock } from './db/stock.repository';
import { startStockPush } from './workers/stock-push.worker';
import { checkDrift } from './flows/drift.flow';
import type { StockPushDeps } from './flows/push-stock.flow';
import type { ReconcileDeps } from './flows/reconcile.flow';
import { WEBHOOK_INGEST_SCHEMA, type WebhookDb } from './db/tables';
import { EntregaBatcher } from './workers/entrega-batcher.worker';
import { startEntregaRequeue } from './workers/entrega-requeue.worker';
import { IntakePace } from './workers/intake-pace.worker';
import { IntegracionCache } from './workers/integracion-cache.worker';
import { adminHandlers } from './handlers/admin.handlers';
import { receiveHandler } from './handlers/receive.handler';
import type { ProcessingDeps } from './flows/process-order.flow';
import { gatewayContexts } from './ports/gateway.port';
import { busCatalog, busInventory } from './ports/inventory.port';
import { busReturns } from './ports/returns.port';
import { busSales } from './ports/sales.port';

export interface WebhookIngestOptions {
  /** Replaces the services processing talks to (tests). */
  deps?: Partial<ProcessingDeps>;
  /** Replaces the shops' clients (tests). */
  openShop?: ReconcileDeps['openShop'];
  openStockShop?: StockPushDeps['openShop'];
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
    async setup({ db, bus, metrics, logger, onShutdown }) {
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
      const relay = new OutboxRelay({ db, bus });
      relay.start();
      const nudge = () => relay.nudge();
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
      let reconciler: Reconciler | undefined;
      bus.serve(
        webhookSubjects,
        {
          'webhooks.receive': receiveHandler({ integraciones, entregas, onReceived: () => pace.arrived() }),
          ...adminHandlers(db, {
            onEnqueued: nudge,
            onIntegracionChanged: () => integraciones.invalidate(),
            keyring,
            reconciler: () => reconciler!,
            drift: (id, o) =>
              checkDrift(
                {
                  db,
                  keyring,
                  policy: { ...DEFAULT_CALL_POLICY, timeoutMs: config.PLATFORM_CALL_TIMEOUT_MS },
                  inventory: deps.inventory,
                  context: deps.context,
                  openShop: options.openStockShop,
                  reconcile: (integracionId) => reconciler!.runNow(integracionId),
                },
                id,
                o,
              ),
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
      await startDeliveryConsumer(db, bus, deps, {
        concurrency: config.WEBHOOK_CONCURRENCY,
        pace,
        backoffMs: WEBHOOK_RETRY_BACKOFF_MS,
        maxDeliver: config.WEBHOOK_MAX_ATTEMPTS,
        onProcessed: (outcome) => outcome !== 'omitida' && processed(outcome),
      });
      const requeued = registerCounter(metrics, {
        name: 'erp_webhook_deliveries_requeued_total',
        help: 'Stored deliveries given a new event because theirs never settled them (an event lost by the stream)',
      });
      const requeue = startEntregaRequeue({
        db,
        logger: logger.child({ component: 'delivery-requeue' }),
        intervalMs: config.WEBHOOK_REQUEUE_INTERVAL_MS,
        afterMs: config.WEBHOOK_REQUEUE_AFTER_MS,
        onRequeued: (n) => {
          requeued(n);
          nudge();
        },
      });
      onShutdown('delivery-requeue', () => requeue.stop());

      const passes = registerOutcomeCounter(metrics, {
        name: 'erp_shop_reconcile_passes_total',
        help: 'Reconciliation passes against the shops, by outcome (correcta, fallida)',
        label: 'outcome',
        outcomes: ['correcta', 'fallida'],
      });
      const recovered = registerCounter(metrics, {
        name: 'erp_shop_orders_recovered_total',
        help: 'Shop orders reconciliation found before any webhook of theirs had come',
      });
      const restored = registerCounter(metrics, {
        name: 'erp_shop_subscriptions_restored_total',
        help: 'Passes that re-activated or re-created a webhook subscription of ours at a shop',
      });
      registerSnapshotGauges(
        metrics,
        {
          edad: {
            name: 'erp_shop_reconcile_success_age_seconds',
            help: 'Seconds since the last successful reconciliation pass of the integration (since its creation before the first)',
            label: 'integracion',
          },
          perdidos: {
            name: 'erp_shop_webhook_miss_ratio',
            help: "Share of the integration's orders of the last day that reconciliation brought before their webhook (0 below 20 orders)",
            label: 'integracion',
          },
        },
        async () => {
          const rows = await reconciliationHealth(db);
          return {
            edad: Object.fromEntries(rows.map((r) => [String(r.integracion_id), r.edad])),
            perdidos: Object.fromEntries(rows.map((r) => [String(r.integracion_id), r.pedidos >= 20 ? r.recuperados / r.pedidos : 0])),
          };
        },
      );
      reconciler = await startReconciler({
        db,
        keyring,
        policy: { ...DEFAULT_CALL_POLICY, timeoutMs: config.PLATFORM_CALL_TIMEOUT_MS },
        webhookBaseUrl: config.PLATFORM_WEBHOOK_BASE_URL,
        overlapMs: config.PLATFORM_RECONCILE_OVERLAP_MS,
        intervalMs: config.PLATFORM_RECONCILE_INTERVAL_MS,
        leaseMs: config.PLATFORM_RECONCILE_LEASE_MS,
        concurrency: config.PLATFORM_RECONCILE_CONCURRENCY,
        owner: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
        openShop: options.openShop,
        onStored: nudge,
        listIds: () => reconciledIntegrationIds(db),
        logger: logger.child({ component: 'reconciliation' }),
        onPass: (pass) => {
          if (pass.resultado === 'ocupada') return;
          passes(pass.resultado);
          if (pass.pedidos_nuevos > 0) recovered(pass.pedidos_nuevos);
          if (pass.suscripcion === 'restaurada') restored();
        },
      });
      onShutdown('reconciliation', () => reconciler!.stop());

      const stockChanges = registerCounter(metrics, {
        name: 'erp_shop_stock_changes_total',
        help: 'Stock changes of products some shop shows, heard from inventory',
      });
      const stockWrites = registerCounter(metrics, {
        name: 'erp_shop_stock_writes_total',
        help: 'Product quantities the shops took from the stock push',
      });
      const stockLag = registerCounter(metrics, {
        name: 'erp_shop_stock_push_lag_seconds_total',
        help: "Seconds from a product's first stock change to the shop taking it, summed over the writes (÷ erp_shop_stock_writes_total: the mean lag)",
      });
      const stockFailures = registerCounter(metrics, {
        name: 'erp_shop_stock_push_failures_total',
        help: 'Product pushes the shop refused or that failed (each retried)',
      });
      registerSnapshotGauges(
        metrics,
        {
          oldest: {
            name: 'erp_shop_stock_oldest_owed_age_seconds',
            help: 'Age of the oldest stock change not yet taken by its shop (0 when none)',
          },
        },
        async () => ({ oldest: await oldestOwedStock(db) }),
      );
      await startStockChangedConsumer(db, bus, (n) => stockChanges(n));
      const stockPush = startStockPush({
        db,
        keyring,
        policy: { ...DEFAULT_CALL_POLICY, timeoutMs: config.PLATFORM_CALL_TIMEOUT_MS },
        owner: `${hostname()}-${process.pid}-stock`,
        inventory: deps.inventory,
        context: deps.context,
        openShop: options.openStockShop,
        logger: logger.child({ component: 'stock-push' }),
        delayMs: config.PLATFORM_STOCK_PUSH_DELAY_MS,
        leaseMs: config.PLATFORM_RECONCILE_LEASE_MS,
        batch: config.PLATFORM_STOCK_PUSH_BATCH,
        onPushed: (lagMs, writes) => {
          stockWrites(writes);
          stockLag((lagMs / 1000) * writes);
        },
        onFailed: (n) => stockFailures(n),
      });
      onShutdown('stock-push', () => stockPush.stop());
    },
  };
}
