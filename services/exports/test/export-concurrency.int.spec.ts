import { sql, type Kysely } from 'kysely';
import { exportsSubjects, salesExportSubjects } from '@erp/contracts';
import { loadConfig } from '@erp/runtime';
import { eventually, harness, tenant, type Harness } from '@erp/testing';
import { EXPORTS_SCHEMA, ExportsConfig, exportsService } from '../src';
import type { ExportsDb } from '../src/db/tables';
import { objetoOf } from '../src/domain/exportacion';

const ctx = tenant(4, { requestId: 'export-concurrency-spec' });

/**
 * A process that takes over a job it still runs (its lease ran out while it stalled): the attempt
 * it left and the new one both hold a snapshot in the owner until the first ends, so both count.
 */
describe('the exports worker’s concurrency', () => {
  let h: Harness<ExportsDb>;
  let db: Kysely<ExportsDb>;
  /** The writes the owner has been asked for and not yet answered. */
  const writing = new Set<string>();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    h = await harness<ExportsDb>('exportconcurrency', { schema: EXPORTS_SCHEMA });
    db = h.db;
    h.bus.serve(
      salesExportSubjects,
      {
        'sales.export.write': async ({ objeto }) => {
          writing.add(objeto);
          await released;
          writing.delete(objeto);
          throw new Error('the owner lost its snapshot');
        },
        'sales.export.remove': async () => ({ removed: false }),
      },
      { queue: 'sales' },
    );
    await h.bus.nc.flush();
    // A lease long enough that its renewal never runs during the test: the takeover is the test's doing.
    await h.start((env) => exportsService(loadConfig(ExportsConfig, env)), {
      env: { DB_POOL_MAX: '3', EXPORT_POLL_MS: '100', EXPORT_LEASE_MS: '60000', EXPORT_CONCURRENCY: '2', EXPORT_RETRY_BACKOFF_MS: '60000' },
    });
  });
  afterAll(async () => {
    release();
    await h?.close();
  });

  it('counts the attempt it left and the one that took its job over, and claims no third', async () => {
    const first = await h.bus.request(exportsSubjects, 'exports.create', { recurso: 'sales', filtros: {} }, ctx);
    const attempt = (intento: number) => objetoOf({ recurso: 'sales', empresa_id: 4, id: first.id, intento });
    await eventually(async () => expect([...writing]).toEqual([attempt(1)]));
    // Its lease runs out while the attempt still waits for the owner (the process stalled).
    await db
      .updateTable('exportaciones')
      .set({ lease_hasta: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', first.id)
      .execute();
    await eventually(async () => expect([...writing].sort()).toEqual([attempt(1), attempt(2)]));

    const second = await h.bus.request(exportsSubjects, 'exports.create', { recurso: 'sales', filtros: {} }, ctx);
    // Polls go by: two attempts run, so the second export waits its turn.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([...writing].sort()).toEqual([attempt(1), attempt(2)]);
    expect((await h.bus.request(exportsSubjects, 'exports.get', { id: second.id }, ctx)).estado).toBe('en_cola');

    // Once both end, the second export gets its turn.
    release();
    await eventually(async () => {
      const row = await db.selectFrom('exportaciones').select(['estado', 'intento']).where('id', '=', second.id).executeTakeFirstOrThrow();
      expect(row.intento).toBe(1);
    });
  });
});
