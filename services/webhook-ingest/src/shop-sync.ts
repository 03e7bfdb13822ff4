import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AppError, type Deriva, type PasadaConciliacion } from '@erp/contracts';
import { registerCounter, registerOutcomeCounter, registerSnapshotGauges, type ServiceContext } from '@erp/runtime';
import type { WebhookIngestConfig } from './config';
import { startStockChangedConsumer } from './consumers/stock-changed.consumer';
import { reconciledIntegrationIds, reconciliationHealth } from './db/conciliacion.repository';
import { oldestOwedStock } from './db/stock.repository';
import type { WebhookDb } from './db/tables';
import type { Keyring } from './domain/credentials';
import { checkDeriva } from './flows/deriva.flow';
import type { ProcessingDeps } from './flows/process-pedido.flow';
import type { StockPushDeps } from './flows/push-stock.flow';
import type { ReconcileDeps } from './flows/reconcile.flow';
import { DEFAULT_CALL_POLICY } from './ports/shops';
import { startReconciler } from './workers/reconcile.worker';
import { startStockPush } from './workers/stock-push.worker';

/** What the back office asks of the shops' side: a pass now, the drift check. */
export interface ShopSync {
  reconcile(integracionId?: number): Promise<PasadaConciliacion[]>;
  drift(request: { id_integracion?: number; reparar: boolean; dias: number }): Promise<Deriva[]>;
}

/**
 * Everything webhook-ingest does towards the shops of integrations with a shop API: the order
 * reconciliation (docs/shops.md), the stock push and the drift check, with their metrics. Its
 * workers (the reconciliation, the stock push) are registered with `addWorker`.
 */
export async function startShopSync(
  input: Pick<ServiceContext<WebhookIngestConfig, WebhookDb>, 'db' | 'bus' | 'metrics' | 'logger' | 'addWorker'> & {
    config: Readonly<WebhookIngestConfig>;
    keyring: Keyring;
    processing: ProcessingDeps;
    onStored: () => void;
    openTienda?: ReconcileDeps['openTienda'];
    openStockTienda?: StockPushDeps['openTienda'];
  },
): Promise<ShopSync> {
  const { db, bus, metrics, logger, addWorker, config, keyring, processing } = input;
  const policy = { ...DEFAULT_CALL_POLICY, timeoutMs: config.PLATFORM_CALL_TIMEOUT_MS };
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
  const reconciler = addWorker(
    'reconciliation',
    await startReconciler({
      db,
      keyring,
      policy,
      webhookBaseUrl: config.PLATFORM_WEBHOOK_BASE_URL,
      overlapMs: config.PLATFORM_RECONCILE_OVERLAP_MS,
      intervalMs: config.PLATFORM_RECONCILE_INTERVAL_MS,
      leaseMs: config.PLATFORM_RECONCILE_LEASE_MS,
      concurrency: config.PLATFORM_RECONCILE_CONCURRENCY,
      owner: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
      openTienda: input.openTienda,
      onStored: input.onStored,
      listIds: () => reconciledIntegrationIds(db),
      logger: logger.child({ component: 'reconciliation' }),
      onPass: (pass) => {
        if (pass.resultado === 'ocupada') return;
        passes(pass.resultado);
        if (pass.pedidos_nuevos > 0) recovered(pass.pedidos_nuevos);
        if (pass.suscripcion === 'restaurada') restored();
      },
    }),
  );

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
  addWorker(
    'stock-push',
    startStockPush({
      db,
      keyring,
      policy,
      owner: `${hostname()}-${process.pid}-stock`,
      inventory: processing.inventory,
      context: processing.context,
      openTienda: input.openStockTienda,
      logger: logger.child({ component: 'stock-push' }),
      delayMs: config.PLATFORM_STOCK_PUSH_DELAY_MS,
      leaseMs: config.PLATFORM_RECONCILE_LEASE_MS,
      batch: config.PLATFORM_STOCK_PUSH_BATCH,
      onPushed: (lagMs, writes) => {
        stockWrites(writes);
        stockLag((lagMs / 1000) * writes);
      },
      onFailed: (n) => stockFailures(n),
    }),
  );

  const driftFound = registerCounter(metrics, {
    name: 'erp_shop_drift_differences_total',
    help: 'Differences the drift check found between a shop and us: products whose stock differed, orders we did not hold',
  });
  const withShopApi = async (id: number | undefined): Promise<number[]> => {
    const ids = await reconciledIntegrationIds(db);
    if (id === undefined) return ids;
    if (!ids.includes(id)) throw AppError.notFound('recurso_no_encontrado', 'Integración no encontrada, inactiva o sin API de la tienda');
    return [id];
  };
  return {
    reconcile: async (id) => reconciler.runNow(id),
    async drift({ id_integracion, reparar, dias }) {
      const results: Deriva[] = [];
      for (const id of await withShopApi(id_integracion)) {
        const found = await checkDeriva(
          {
            db,
            keyring,
            policy,
            inventory: processing.inventory,
            context: processing.context,
            openTienda: input.openStockTienda,
            reconcile: (i) => reconciler.runNow(i),
          },
          id,
          { reparar, dias },
        );
        driftFound(found.stock_distinto.length + found.pedidos_pendientes.length);
        results.push(found);
      }
      return results;
    },
  };
}
