import { AppError, exportsSubjects, returnsExportSubjects } from '@erp/contracts';
import { loadConfig, type RunningService } from '@erp/runtime';
import { eventually, harness, tenant, type Harness } from '@erp/testing';
import { EXPORTS_SCHEMA, ExportsConfig, exportsService } from '../src';
import type { ExportsDb } from '../src/db/tables';

const ctx = tenant(5, { requestId: 'export-failures-metric-spec' });

/** An export whose every attempt fails is counted once, when it fails for good (ErpExportsFailing). */
describe('exports failed for good, on /metrics', () => {
  let h: Harness<ExportsDb>;
  let service: RunningService<ExportsConfig>;
  const failedTotal = async () => {
    const text = await (await fetch(`http://127.0.0.1:${service.opsPort}/metrics`)).text();
    return Number(/^erp_exports_failed_total\{service="exports"\} (\d+)$/m.exec(text)?.[1]);
  };

  beforeAll(async () => {
    h = await harness<ExportsDb>('exportfailmetric', { schema: EXPORTS_SCHEMA });
    service = await h.start((env) => exportsService(loadConfig(ExportsConfig, env)), {
      env: { DB_POOL_MAX: '3', EXPORT_POLL_MS: '100', EXPORT_MAX_ATTEMPTS: '2', EXPORT_RETRY_BACKOFF_MS: '100' },
    });
  });
  afterAll(() => h?.close());

  it('counts an export whose last attempt failed, not the attempts before it', async () => {
    expect(await failedTotal()).toBe(0);
    let attempts = 0;
    h.bus.serve(
      returnsExportSubjects,
      {
        'returns.export.remove': async () => ({ removed: false }),
        'returns.export.write': async () => {
          attempts += 1;
          throw new AppError('UNAVAILABLE', 'Servicio no disponible (returns)');
        },
      },
      { queue: 'returns' },
    );
    await h.bus.nc.flush();
    const { id } = await h.bus.request(exportsSubjects, 'exports.create', { recurso: 'returns', filtros: {} }, ctx);
    await eventually(async () => {
      const row = await h.db.selectFrom('exportaciones').select('estado').where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.estado).toBe('fallida');
    }, 20_000);
    expect(attempts).toBe(2);
    // Counted just after the transaction that made it `fallida` commits.
    await eventually(async () => expect(await failedTotal()).toBe(1), 5_000);
  });
});
