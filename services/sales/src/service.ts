import {
  salesAdminSubjects,
  salesApiSubjects,
  salesExportSubjects,
  salesForReturnsSubjects,
  salesPlatformSubjects,
  salesSubjects,
} from '@erp/contracts';
import { exportPacing, type ServiceSpec } from '@erp/runtime';
import { withSalesDefaults, type SalesConfig, type SalesConfigInput } from './config';
import { startReturnsConsumers } from './consumers/returns.consumer';
import { migrations } from './db/migrations';
import { SALES_SCHEMA, type SalesDb } from './db/tables';
import { faultHooks } from './fault-injection';
import { adminHandlers } from './handlers/admin.handlers';
import { createVentaHandler } from './handlers/create-venta.handler';
import { createVentasBatchHandler } from './handlers/create-ventas-batch.handler';
import { lookupHandlers } from './handlers/lookup.handlers';
import { getVentaHandler, listVentasHandler, ventasPageVersionHandler, ventasSummaryHandler } from './handlers/read-ventas.handler';
import { ventaExistsHandler } from './handlers/venta-exists.handler';
import { returnRegistrationHandlers } from './handlers/return-registration.handlers';
import { updateVentaHandler } from './handlers/update-venta.handler';
import { removeExportHandler } from './handlers/remove-export.handler';
import { writeExportHandler } from './handlers/write-export.handler';
import { platformHandlers } from './handlers/platform.handlers';
import { startRegistrationSweeper } from './workers/registration-sweeper.worker';
import { startRevisionSweeper } from './workers/revision-sweeper.worker';

export function salesService(input: Readonly<SalesConfigInput>): ServiceSpec<SalesConfig, SalesDb> {
  const config = withSalesDefaults(input);
  return {
    name: 'sales',
    schema: SALES_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, outbox, logger, addWorker, metrics }) {
      if (config.SALES_FAULT_INJECTION !== 'off')
        logger.warn({ fault: config.SALES_FAULT_INJECTION }, 'fault injection is on: this process will kill itself');
      const after = faultHooks(config.SALES_FAULT_INJECTION);
      const createDeps = { db, bus, onCommitted: () => outbox.nudge(), after: after.create };
      bus.serve(salesSubjects, { 'sales.sale.exists': ventaExistsHandler(db) }, { queue: 'sales' });
      bus.serve(salesForReturnsSubjects, returnRegistrationHandlers(db, bus), { queue: 'sales' });
      bus.serve(
        salesApiSubjects,
        {
          'sales.create': createVentaHandler(createDeps),
          'sales.batch.create': createVentasBatchHandler(createDeps, logger.child({ component: 'sales-batch' })),
          'sales.update': updateVentaHandler({ db, bus, ...after.update }),
          'sales.sale.get': getVentaHandler(db),
          'sales.sale.list': listVentasHandler(db),
          'sales.sale.version': ventasPageVersionHandler(db),
          'sales.summary': ventasSummaryHandler(db),
          ...lookupHandlers(db),
        },
        { queue: 'sales' },
      );
      bus.serve(salesAdminSubjects, adminHandlers(db, bus), { queue: 'sales' });
      bus.serve(salesPlatformSubjects, platformHandlers(db, bus), { queue: 'sales' });
      bus.serve(
        salesExportSubjects,
        {
          'sales.export.write': writeExportHandler(db, bus, exportPacing(metrics, config)),
          'sales.export.remove': removeExportHandler(bus),
        },
        { queue: 'sales' },
      );
      await startReturnsConsumers(db, bus);
      addWorker(
        'registration-sweeper',
        startRegistrationSweeper({
          db,
          bus,
          logger: logger.child({ component: 'registration-sweeper' }),
          intervalMs: config.REGISTRATION_SWEEP_INTERVAL_MS,
          afterMs: config.REGISTRATION_SQUARE_AFTER_MS,
        }),
      );
      addWorker(
        'revision-sweeper',
        startRevisionSweeper({
          db,
          bus,
          logger: logger.child({ component: 'revision-sweeper' }),
          intervalMs: config.REVISION_SWEEP_INTERVAL_MS,
          afterMs: config.REVISION_SQUARE_AFTER_MS,
        }),
      );
    },
  };
}
