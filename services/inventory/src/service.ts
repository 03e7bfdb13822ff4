import { inventoryExportSubjects, inventorySubjects } from '@erp/contracts';
import { exportPacing, registerSnapshotGauges, type ServiceSpec } from '@erp/runtime';
import { withInventoryDefaults, type InventoryConfig, type InventoryConfigInput } from './config';
import { startSaleCreatedConsumer } from './consumers/sale-created.consumer';
import { migrations } from './db/migrations';
import { openReservas } from './db/reserva.repository';
import { INVENTORY_SCHEMA, type InventoryDb } from './db/tables';
import { adjustStockHandler } from './handlers/adjust-stock.handler';
import { revertAdjustmentHandler } from './handlers/revert-adjustment.handler';
import { confirmStockHandler } from './handlers/confirm-stock.handler';
import { createProductHandler } from './handlers/create-product.handler';
import { getProductHandler } from './handlers/get-product.handler';
import { inventorySummaryHandler } from './handlers/inventory-summary.handler';
import { listProductsHandler } from './handlers/list-products.handler';
import { listSucursalesHandler } from './handlers/list-sucursales.handler';
import { lugarAdminHandlers } from './handlers/lugar-admin.handlers';
import { releaseStockHandler } from './handlers/release-stock.handler';
import { reserveStockHandler } from './handlers/reserve-stock.handler';
import { reserveStockManyHandler } from './handlers/reserve-stock-many.handler';
import { resolveProductsHandler } from './handlers/resolve-products.handler';
import { resolveSucursalHandler } from './handlers/resolve-sucursal.handler';
import { seedHandler } from './handlers/seed.handler';
import { updateProductHandler } from './handlers/update-product.handler';
import { removeExportHandler } from './handlers/remove-export.handler';
import { writeExportHandler } from './handlers/write-export.handler';
import { startReservaSweeper } from './workers/reserva-sweeper.worker';
import { finishConteosPendientes } from './flows/set-lugar-active.flow';

export function inventoryService(input: Readonly<InventoryConfigInput>): ServiceSpec<InventoryConfig, InventoryDb> {
  const config = withInventoryDefaults(input);
  return {
    name: 'inventory',
    schema: INVENTORY_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, outbox, logger, addWorker, metrics }) {
      // A handler that moved stock committed its `stock.changed` event: published now, not at the relay's next poll.
      const publishing =
        <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
        async (...args: A): Promise<R> => {
          const result = await handler(...args);
          outbox.nudge();
          return result;
        };
      registerSnapshotGauges(
        metrics,
        {
          open: { name: 'erp_inventory_open_reservations', help: 'Stock reservations neither confirmed nor released yet' },
          oldestAgeSeconds: {
            name: 'erp_inventory_oldest_open_reservation_age_seconds',
            help: 'Age of the oldest open stock reservation (0 when none); the sweeper settles those past RESERVATION_TIMEOUT_MS',
          },
        },
        () => openReservas(db),
      );
      bus.serve(
        inventorySubjects,
        {
          'inventory.product.get': getProductHandler(db),
          'inventory.product.list': listProductsHandler(db),
          'inventory.summary': inventorySummaryHandler(db),
          'inventory.product.resolve': resolveProductsHandler(db),
          'inventory.sucursal.resolve': resolveSucursalHandler(db),
          'inventory.sucursal.list': listSucursalesHandler(db),
          'inventory.stock.reserve': publishing(reserveStockHandler(db, { checkAfterMs: config.RESERVATION_TIMEOUT_MS })),
          'inventory.stock.reserve-many': publishing(reserveStockManyHandler(db, logger, { checkAfterMs: config.RESERVATION_TIMEOUT_MS })),
          'inventory.stock.confirm': publishing(confirmStockHandler(db)),
          'inventory.stock.release': publishing(releaseStockHandler(db)),
          'inventory.stock.adjust': publishing(adjustStockHandler(db)),
          'inventory.stock.revert': publishing(revertAdjustmentHandler(db)),
          'inventory.product.create': createProductHandler(db),
          'inventory.product.update': updateProductHandler(db),
          ...lugarAdminHandlers(db, { countBatch: config.LOCATION_COUNT_BATCH }),
          'inventory.admin.seed': seedHandler(db),
        },
        { queue: 'inventory' },
      );
      bus.serve(
        inventoryExportSubjects,
        {
          'inventory.export.write': writeExportHandler(db, bus, exportPacing(metrics, config)),
          'inventory.export.remove': removeExportHandler(bus),
        },
        { queue: 'inventory' },
      );
      await startSaleCreatedConsumer(db, bus);
      // A (de)activation cut short by a stop: its entries are counted as the place now says.
      void finishConteosPendientes(db, config.LOCATION_COUNT_BATCH).then(
        (n) => {
          if (n > 0) logger.info({ places: n }, 'finished the stock counts of places changed before the last stop');
        },
        (err: unknown) => logger.warn({ err }, 'stock counts of changed places not finished; the next start or change finishes them'),
      );
      addWorker(
        'reservation-sweeper',
        startReservaSweeper({
          db,
          bus,
          logger: logger.child({ component: 'reservation-sweeper' }),
          intervalMs: config.RESERVATION_SWEEP_INTERVAL_MS,
          checkTimeoutMs: config.RESERVATION_CHECK_TIMEOUT_MS,
        }),
      );
    },
  };
}
