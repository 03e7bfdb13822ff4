import { EXPORT_WRITERS, exportStore } from '@erp/bus';
import { exportsSubjects } from '@erp/contracts';
import { registerCounter, type ServiceSpec } from '@erp/runtime';
import { withExportsDefaults, type ExportsConfig, type ExportsConfigInput } from './config';
import { migrations } from './db/migrations';
import { EXPORTS_SCHEMA, type ExportsDb } from './db/tables';
import { exportsHandlers } from './handlers/exports.handlers';
import { startExportacionWorker } from './workers/exportacion.worker';

export function exportsService(input: Readonly<ExportsConfigInput>): ServiceSpec<ExportsConfig, ExportsDb> {
  const config = withExportsDefaults(input);
  return {
    name: 'exports',
    schema: EXPORTS_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, outbox, logger, addWorker, metrics }) {
      // Made by the operator's step (or at start in local runs and tests): refuse to start without them.
      await Promise.all(EXPORT_WRITERS.map((writer) => exportStore(bus, writer)));
      const worker = addWorker(
        'export-worker',
        startExportacionWorker({
          db,
          bus,
          logger: logger.child({ component: 'export-worker' }),
          config,
          onEvent: () => outbox.nudge(),
          onFailed: registerCounter(metrics, {
            name: 'erp_exports_failed_total',
            help: 'Exports that failed for good (their last attempt, EXPORT_MAX_ATTEMPTS, failed): the partner gets no file',
          }),
        }),
      );
      bus.serve(
        exportsSubjects,
        exportsHandlers(db, bus, () => worker.nudge()),
        { queue: 'exports' },
      );
    },
  };
}
