import type { Kysely } from 'kysely';
import { OutboxRelay, ensureExportStore } from '@erp/bus';
import { exportsSubjects } from '@erp/contracts';
import type { ServiceSpec } from '@erp/runtime';
import { withExportsDefaults, type ExportsConfig, type ExportsConfigInput } from './config';
import { migrations } from './db/migrations';
import { EXPORTS_SCHEMA, type ExportsDb } from './db/tables';
import { exportsHandlers } from './handlers/exports.handlers';
import { ExportWorker } from './workers/export.worker';

export { EXPORTS_SCHEMA };

/** A day past `expira`, JetStream removes a file whatever the job records say (see ExportStoreSettings). */
const STORE_BACKSTOP_MS = 24 * 3600_000;

export function exportsService(input: Readonly<ExportsConfigInput>): ServiceSpec<ExportsConfig> {
  const config = withExportsDefaults(input);
  return {
    name: 'exports',
    schema: EXPORTS_SCHEMA,
    migrations,
    config,
    async setup({ db: anyDb, bus, logger, onShutdown }) {
      const db = anyDb as Kysely<ExportsDb>;
      await ensureExportStore(bus, {
        replicas: config.JETSTREAM_REPLICAS,
        maxBytes: config.EXPORT_STORE_MAX_BYTES,
        maxAgeMs: config.EXPORT_TTL_MS + STORE_BACKSTOP_MS,
      });
      const relay = new OutboxRelay({ db, bus });
      relay.start();
      const worker = new ExportWorker({
        db,
        bus,
        logger: logger.child({ component: 'export-worker' }),
        config,
        onEvent: () => relay.nudge(),
      });
      bus.serve(
        exportsSubjects,
        exportsHandlers(db, bus, () => worker.nudge()),
        { queue: 'exports' },
      );
      worker.start();
      onShutdown('export-worker', () => worker.stop());
    },
  };
}
