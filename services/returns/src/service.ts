import {
  returnsAdminSubjects,
  returnsApiSubjects,
  returnsExportSubjects,
  returnsForSalesSubjects,
  returnsPlatformSubjects,
} from '@erp/contracts';
import { exportPacing, type ServiceSpec } from '@erp/runtime';
import type { ReturnsConfig } from './config';
import { startReturnStockConsumers } from './consumers/return-stock.consumer';
import { migrations } from './db/migrations';
import { RETURNS_SCHEMA, type ReturnsDb } from './db/tables';
import { annulReturnHandler } from './handlers/annul-return.handler';
import { createReturnHandler } from './handlers/create-return.handler';
import { saleRegistrationsHandler } from './handlers/sale-registrations.handler';
import { getReturnHandler, listReturnsHandler, returnsSummaryHandler } from './handlers/read-returns.handler';
import { removeExportHandler } from './handlers/remove-export.handler';
import { writeExportHandler } from './handlers/write-export.handler';

export function returnsService(config: Readonly<ReturnsConfig>): ServiceSpec<ReturnsConfig, ReturnsDb> {
  return {
    name: 'returns',
    schema: RETURNS_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, outbox, metrics }) {
      const onCommitted = () => outbox.nudge();
      bus.serve(
        returnsApiSubjects,
        {
          'returns.return.list': listReturnsHandler(db),
          'returns.return.get': getReturnHandler(db),
          'returns.summary': returnsSummaryHandler(db),
        },
        { queue: 'returns' },
      );
      const createReturn = createReturnHandler({ db, bus, onCommitted });
      bus.serve(
        returnsAdminSubjects,
        {
          'returns.admin.create': createReturn,
          'returns.admin.annul': annulReturnHandler({ db, bus, onCommitted }),
        },
        { queue: 'returns' },
      );
      bus.serve(returnsPlatformSubjects, { 'returns.platform.create': createReturn }, { queue: 'returns' });
      bus.serve(returnsForSalesSubjects, { 'returns.sale.registrations': saleRegistrationsHandler(db) }, { queue: 'returns' });
      bus.serve(
        returnsExportSubjects,
        {
          'returns.export.write': writeExportHandler(db, bus, exportPacing(metrics, config)),
          'returns.export.remove': removeExportHandler(bus),
        },
        { queue: 'returns' },
      );
      await startReturnStockConsumers(db, bus);
    },
  };
}
