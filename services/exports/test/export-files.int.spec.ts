import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { sql, type Kysely } from 'kysely';
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { EXPORT_WRITERS, deleteObject, exportStoreName, putNdjsonGzip, readObjectFrom, type Bus } from '@erp/bus';
import { AppError, exportsSubjects, inventoryExportSubjects, returnsExportSubjects, salesExportSubjects } from '@erp/contracts';
import { migrateSchema } from '@erp/db';
import { loadConfig, type RunningService } from '@erp/runtime';
import { eventually, harness, tenant, until, type Harness } from '@erp/testing';
import { EXPORTS_SCHEMA, ExportsConfig, exportsMigrations, exportsService } from '../src';
import type { ExportsDb } from '../src/db/tables';
import { objetoOf } from '../src/domain/exportacion';

const ctx = tenant(3, { requestId: 'export-files-spec' });

/**
 * The exports service's records of the files its attempts had written, on a real Postgres and
 * JetStream object store, with the owner of the data played by this test over the bus: a file is
 * recorded before its owner is asked to put it, so a file put after its job moved on is found in
 * the records and removed, without listing the store.
 */
describe('the files of the exports, found in their records', () => {
  let h: Harness<ExportsDb>;
  let owner: Bus;
  let db: Kysely<ExportsDb>;
  const replicas: Array<RunningService<ExportsConfig>> = [];
  const start = async () => {
    const service = await h.start((env) => exportsService(loadConfig(ExportsConfig, env)), {
      env: {
        DB_POOL_MAX: '3',
        EXPORT_POLL_MS: '100',
        EXPORT_LEASE_MS: '600',
        EXPORT_ORPHAN_SWEEP_MS: '200',
        EXPORT_MAX_ATTEMPTS: '5',
        EXPORT_RETRY_BACKOFF_MS: '800',
      },
    });
    replicas.push(service);
    return service;
  };
  /** The stores' own lists (a consumer: the test's connection has no restriction). */
  const storedFiles = async () => {
    const names: string[] = [];
    for (const writer of EXPORT_WRITERS)
      names.push(...(await (await new Objm(owner.nc).open(exportStoreName(h.iso.subjectPrefix, writer))).list()).map((i) => i.name));
    return names;
  };
  /** What the owner does when asked to remove a file of its store. */
  const remove = async ({ objeto }: { objeto: string }) => ({ removed: await deleteObject(owner, objeto) });
  const recorded = async (exportacionId: number) =>
    (await db.selectFrom('archivos').select('objeto').where('exportacion_id', '=', exportacionId).orderBy('objeto').execute()).map(
      (r) => r.objeto,
    );

  beforeAll(async () => {
    h = await harness<ExportsDb>('exportfiles', { schema: EXPORTS_SCHEMA });
    owner = h.bus;
    db = h.db;
    await start();
  });
  afterAll(() => h?.close());

  it('removes the file an owner put after the worker that asked for it died and the job moved on', async () => {
    const asked: Array<{ objeto: string; recordedBefore: boolean }> = [];
    let release!: () => void;
    const firstMayWrite = new Promise<void>((resolve) => (release = resolve));
    let firstWritten!: () => void;
    const firstIsWritten = new Promise<void>((resolve) => (firstWritten = resolve));
    owner.serve(
      salesExportSubjects,
      {
        'sales.export.remove': remove,
        'sales.export.write': async ({ objeto }) => {
          const before = await db.selectFrom('archivos').select('objeto').where('objeto', '=', objeto).executeTakeFirst();
          asked.push({ objeto, recordedBefore: before !== undefined });
          const first = asked.length === 1;
          if (first) await firstMayWrite;
          const lines = async function* () {
            yield { count: 1, lines: `${JSON.stringify({ objeto })}\n` };
          };
          const file = await putNdjsonGzip(owner, objeto, lines());
          if (first) firstWritten();
          return { ...file, cursor: 'WyIxIiwwXQ' };
        },
      },
      { queue: 'sales' },
    );
    await owner.nc.flush();

    const { id } = await owner.request(exportsSubjects, 'exports.create', { recurso: 'sales', filtros: {} }, ctx);
    await eventually(async () => expect(asked).toHaveLength(1));
    // A crash while its owner writes: no stop step runs, the lease is not given back.
    const dead = replicas[0]!;
    dead.ctx.bus.nc.close().catch(() => undefined);
    await (dead.ctx.db as Kysely<unknown>).destroy();
    await start();
    const done = await eventually(async () => {
      const row = await owner.request(exportsSubjects, 'exports.get', { id }, ctx);
      expect(row.estado).toBe('completada');
      return row;
    }, 20_000);
    expect(done.error).toBeNull();
    const [first, second] = [
      objetoOf({ recurso: 'sales', empresa_id: 3, id, intento: 1 }),
      objetoOf({ recurso: 'sales', empresa_id: 3, id, intento: 2 }),
    ];
    expect(asked).toEqual([
      { objeto: first, recordedBefore: true },
      { objeto: second, recordedBefore: true },
    ]);
    expect(await storedFiles()).toEqual([second]);

    // The first attempt's owner finishes now, long after its job moved on.
    release();
    await firstIsWritten;
    await eventually(async () => {
      expect(await storedFiles()).toEqual([second]);
      expect(await recorded(id)).toEqual([second]);
    }, 10_000);
  }, 60_000);

  it('tries a failed attempt again only after a pause that doubles with each failure, and completes once the owner answers', async () => {
    const asked: number[] = [];
    owner.serve(
      returnsExportSubjects,
      {
        'returns.export.remove': remove,
        'returns.export.write': async ({ objeto }) => {
          asked.push(Date.now());
          // The owner's database restarting: the first two attempts fail.
          if (asked.length <= 2) throw new AppError('UNAVAILABLE', 'Servicio no disponible (returns)');
          const lines = async function* () {
            yield { count: 1, lines: `${JSON.stringify({ objeto })}\n` };
          };
          return { ...(await putNdjsonGzip(owner, objeto, lines())), cursor: 'WyIxIiwwXQ' };
        },
      },
      { queue: 'returns' },
    );
    await owner.nc.flush();
    const { id } = await owner.request(exportsSubjects, 'exports.create', { recurso: 'returns', filtros: {} }, ctx);
    const done = await eventually(async () => {
      const row = await db.selectFrom('exportaciones').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.estado).toBe('completada');
      return row;
    }, 20_000);
    expect(done.intento).toBe(3);
    expect(asked).toHaveLength(3);
    // 800 ms after the first failure, 1,600 ms after the second (the poll adds up to 100 ms).
    expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(800);
    expect(asked[2]! - asked[1]!).toBeGreaterThanOrEqual(1_600);
  });

  it('tries a failed attempt again under a name of its own while the first attempt’s writer is still putting its file, and the job keeps the retry’s file', async () => {
    const asked: string[] = [];
    let release!: () => void;
    const firstMayFinish = new Promise<void>((resolve) => (release = resolve));
    let firstWritten!: () => void;
    const firstIsWritten = new Promise<void>((resolve) => (firstWritten = resolve));
    owner.serve(
      inventoryExportSubjects,
      {
        'inventory.export.remove': remove,
        'inventory.export.write': async ({ objeto }) => {
          asked.push(objeto);
          if (asked.length > 1) {
            const lines = async function* () {
              yield { count: 1, lines: `${JSON.stringify({ objeto })}\n` };
            };
            return { ...(await putNdjsonGzip(owner, objeto, lines())), cursor: 'WyIxIiwwXQ' };
          }
          // The first attempt's writer has put part of its file (its first chunks) when its answer
          // fails, and goes on writing after the job moved on to its next attempt.
          const stream = await (await jetstreamManager(owner.nc)).streams.get(`OBJ_${exportStoreName(h.iso.subjectPrefix, 'inventory')}`);
          const before = (await stream.info()).state.bytes;
          const partial = async function* () {
            for (let i = 0; i < 4; i++)
              yield { count: 1, lines: `${JSON.stringify({ objeto, relleno: randomBytes(100_000).toString('hex') })}\n` };
            await firstMayFinish;
            yield { count: 1, lines: `${JSON.stringify({ objeto, fin: true })}\n` };
          };
          void putNdjsonGzip(owner, objeto, partial()).then(() => firstWritten());
          await until(async () => (await stream.info()).state.bytes >= before + 128 * 1024, 10_000, 20, 'a first chunk stored');
          throw new AppError('UNAVAILABLE', 'Servicio no disponible (inventory)');
        },
      },
      { queue: 'inventory' },
    );
    await owner.nc.flush();
    const { id } = await owner.request(exportsSubjects, 'exports.create', { recurso: 'inventory', filtros: {} }, ctx);
    const done = await eventually(async () => {
      const row = await db.selectFrom('exportaciones').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.estado).toBe('completada');
      return row;
    }, 20_000);
    const [first, second] = [
      objetoOf({ recurso: 'inventory', empresa_id: 3, id, intento: 1 }),
      objetoOf({ recurso: 'inventory', empresa_id: 3, id, intento: 2 }),
    ];
    expect(asked).toEqual([first, second]);
    expect(done.objeto).toBe(second);

    // The first writer finishes its file now: it is nobody's, and goes; the job's file stays whole.
    release();
    await firstIsWritten;
    await eventually(async () => {
      expect(await storedFiles()).not.toContain(first);
      expect(await recorded(id)).toEqual([second]);
    }, 10_000);
    const file = await readObjectFrom(owner, second);
    const chunks: Buffer[] = [];
    for await (const chunk of file!) chunks.push(chunk as Buffer);
    expect(gunzipSync(Buffer.concat(chunks)).toString()).toBe(`${JSON.stringify({ objeto: second })}\n`);
  });

  it('keeps a record whose file is not there while its owner may still write it, until the store keeps no file that old', async () => {
    const { id } = await db
      .insertInto('exportaciones')
      .values({ empresa_id: 3, recurso: 'sales', filtros: '{}', contexto: JSON.stringify(ctx), estado: 'fallida', intento: 2 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const [recent, old] = [
      objetoOf({ recurso: 'sales', empresa_id: 3, id, intento: 2 }),
      objetoOf({ recurso: 'sales', empresa_id: 3, id, intento: 1 }),
    ];
    // The store keeps files a day past the exports' TTL.
    await db
      .insertInto('archivos')
      .values([
        { objeto: recent, exportacion_id: id, intento: 2 },
        { objeto: old, exportacion_id: id, intento: 1, created_at: sql<Date>`now() - interval '9 days'` },
      ])
      .execute();
    await eventually(async () => expect(await recorded(id)).toEqual([recent]));
    // Sweeps go by; the recent record stays, looked for again each time.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await recorded(id)).toEqual([recent]);
    const lines = async function* () {
      yield { count: 1, lines: '{"tarde":true}\n' };
    };
    await putNdjsonGzip(owner, recent, lines());
    await eventually(async () => expect(await recorded(id)).toEqual([]), 10_000);
    expect(await storedFiles()).not.toContain(recent);
  });
});

describe('the exports migrations of the files', () => {
  let h: Harness<unknown>;

  beforeAll(async () => {
    h = await harness('exportmig');
  });
  afterAll(() => h?.close());

  /** A file's name before the stores were one per writer. */
  const sharedStoreName = (job: { empresa_id: number; id: number; intento: number }) =>
    `empresa-${job.empresa_id}.exportacion-${job.id}.intento-${job.intento}.ndjson.gz`;

  it('records every attempt of the jobs made before it, named as their files were', async () => {
    const root = h.db;
    const before = Object.fromEntries(Object.entries(exportsMigrations).filter(([name]) => name < '0003-archivos'));
    await migrateSchema(root, EXPORTS_SCHEMA, before);
    const db = root.withSchema(EXPORTS_SCHEMA) as Kysely<ExportsDb>;
    const jobs = await db
      .insertInto('exportaciones')
      .values(
        [0, 1, 3].map((intento) => ({ empresa_id: 5, recurso: 'sales' as const, filtros: '{}', contexto: JSON.stringify(ctx), intento })),
      )
      .returning(['id', 'empresa_id', 'intento'])
      .execute();
    const toShared = Object.fromEntries(Object.entries(exportsMigrations).filter(([name]) => name < '0006'));
    await migrateSchema(root, EXPORTS_SCHEMA, toShared);
    const rows = await db.selectFrom('archivos').select(['objeto', 'exportacion_id', 'intento']).orderBy('objeto').execute();
    const expected = jobs.flatMap((job) =>
      Array.from({ length: job.intento }, (_, i) => ({
        objeto: sharedStoreName({ ...job, intento: i + 1 }),
        exportacion_id: job.id,
        intento: i + 1,
      })),
    );
    expect(rows).toEqual(expected.sort((a, b) => a.objeto.localeCompare(b.objeto)));
  });

  it('queues again a completed export whose file is in the shared store, and forgets the records of the shared store’s files', async () => {
    const db = h.db.withSchema(EXPORTS_SCHEMA) as Kysely<ExportsDb>;
    const job = (over: Record<string, unknown>) => ({
      empresa_id: 5,
      recurso: 'sales' as const,
      filtros: '{}',
      contexto: JSON.stringify(ctx),
      intento: 1,
      ...over,
    });
    const [vigente, expirada, fallida] = await db
      .insertInto('exportaciones')
      .values([
        job({
          estado: 'completada',
          objetos: 2,
          bytes: 40,
          cursor: 'WyIxIiwwXQ',
          completada: sql`now()`,
          expira: sql`now() + interval '1 day'`,
        }),
        job({
          estado: 'completada',
          objetos: 2,
          bytes: 40,
          cursor: 'WyIxIiwwXQ',
          completada: sql`now()`,
          expira: sql`now() - interval '1 day'`,
        }),
        job({ estado: 'fallida', error: 'no' }),
      ])
      .returning(['id', 'empresa_id', 'intento'])
      .execute();
    for (const row of [vigente!, expirada!]) {
      await db
        .updateTable('exportaciones')
        .set({ objeto: sharedStoreName(row) })
        .where('id', '=', row.id)
        .execute();
      await db
        .insertInto('archivos')
        .values({ objeto: sharedStoreName(row), exportacion_id: row.id, intento: 1 })
        .execute();
    }
    await db
      .insertInto('archivos')
      .values({ objeto: sharedStoreName(fallida!), exportacion_id: fallida!.id, intento: 1 })
      .execute();
    await migrateSchema(h.db, EXPORTS_SCHEMA, exportsMigrations);

    const rows = await db
      .selectFrom('exportaciones')
      .selectAll()
      .where('id', 'in', [vigente!.id, expirada!.id, fallida!.id])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.estado, r.objeto, r.objetos, r.cursor, r.expira, r.intento])).toEqual([
      ['en_cola', null, null, null, null, 1],
      ['completada', null, 2, 'WyIxIiwwXQ', rows[1]!.expira, 1],
      ['fallida', null, null, null, null, 1],
    ]);
    expect(
      await db.selectFrom('archivos').select('objeto').where('exportacion_id', 'in', [vigente!.id, expirada!.id, fallida!.id]).execute(),
    ).toEqual([]);
  });
});
