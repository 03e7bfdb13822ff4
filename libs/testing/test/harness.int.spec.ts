import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { z } from 'zod';
import { createOutboxTables, ensureConsumer, ensureEventStream, publishEvent, startConsumer } from '@erp/bus';
import { defineCatalog, defineEvents, streamName } from '@erp/contracts';
import { sql, type Generated, type Migrations } from '@erp/db';
import { BaseConfig, loadConfig } from '@erp/runtime';
import { configuredUrls, consumerBacklogs, harness, tenant, type Harness } from '../src';

interface NotasDb {
  notas: { id: Generated<number>; texto: string };
}
const migrations: Migrations = {
  '0001': {
    up: async (db) => {
      await createOutboxTables(db);
      await db.schema
        .createTable('notas')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('texto', 'text')
        .execute();
    },
  },
};
const catalog = defineCatalog({
  'notas.count': { tenant: true, errors: [], request: z.object({}), reply: z.object({ n: z.number(), empresa: z.number() }) },
});

const databaseExists = async (h: Harness<unknown>) => {
  const name = new URL(h.iso.databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: configuredUrls().databaseUrl });
  await admin.connect();
  try {
    return (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await admin.end();
  }
};

describe('the integration harness', () => {
  let sut: Harness<NotasDb>;
  const statements: string[] = [];

  beforeAll(async () => {
    sut = await harness<NotasDb>('harness', { schema: 'notas', migrations, onQuery: (text) => statements.push(text) });
  });
  afterAll(() => sut.close());

  it('migrates the schema and binds the typed db to it, logging what it runs', async () => {
    await sut.db.insertInto('notas').values({ texto: 'hola' }).execute();
    expect(await sut.db.selectFrom('notas').select('texto').execute()).toEqual([{ texto: 'hola' }]);
    expect(await sut.query('select texto from notas.notas')).toEqual([{ texto: 'hola' }]);
    expect(statements).toContainEqual(expect.stringMatching(/^insert into "notas"."notas"/));
    const counted: string[] = [];
    const other = sut.openDb({ onQuery: (text) => counted.push(text) });
    await other.selectFrom('notas').selectAll().execute();
    expect(counted).toEqual(['select * from "notas"."notas"']);
  });

  it('starts a service on the isolation that the client bus reaches, and a tenant of the company asked for', async () => {
    await sut.start((env) => ({
      name: 'packages',
      schema: 'notas',
      migrations,
      config: loadConfig(BaseConfig, env),
      setup: async (ctx) => {
        ctx.bus.serve(
          catalog,
          {
            'notas.count': async (_req, c) => ({
              n: (
                await ctx.db
                  .selectFrom('notas')
                  .select(sql<number>`count(*)::int`.as('n'))
                  .executeTakeFirstOrThrow()
              ).n,
              empresa: c.empresa.id,
            }),
          },
          { queue: 'notas' },
        );
        // Another connection's request finds the subscription once the server has it.
        await ctx.bus.nc.flush();
      },
    }));
    expect(await sut.bus.request(catalog, 'notas.count', {}, tenant(4))).toEqual({ n: 1, empresa: 4 });
    const jsm = await jetstreamManager(sut.bus.nc);
    expect((await jsm.streams.info(streamName(sut.iso.subjectPrefix))).config.name).toBe(streamName(sut.iso.subjectPrefix));
  });

  it('waits for a durable consumer of either stream to settle what it was given, and counts it among the backlogs', async () => {
    const intake = defineEvents({ 'intake.notas.nota.recibida': { payload: z.object({ id: z.number() }) } });
    await ensureEventStream(sut.bus, 'intake');
    await ensureConsumer(sut.bus, 'notas-intake', ['intake.notas.nota.recibida']);
    await ensureConsumer(sut.bus, 'notas-events', ['events.notas.nota.creada']);
    await publishEvent(sut.bus, 'intake.notas.nota.recibida', { id: 1 }, { msgId: 'nota-1' });
    const backlogOf = async (name: string) => (await consumerBacklogs(sut.bus.nc, sut.iso.subjectPrefix)).find((b) => b.name === name);
    expect(await backlogOf('notas-intake')).toEqual({
      stream: streamName(sut.iso.subjectPrefix, 'intake'),
      name: 'notas-intake',
      pending: 1,
      unacknowledged: 0,
    });
    expect(await backlogOf('notas-events')).toEqual({
      stream: streamName(sut.iso.subjectPrefix),
      name: 'notas-events',
      pending: 0,
      unacknowledged: 0,
    });
    const handled: number[] = [];
    await startConsumer(sut.bus, {
      durable: 'notas-intake',
      events: intake,
      subjects: ['intake.notas.nota.recibida'],
      handler: async (_subject, payload) => void handled.push(payload.id),
    });
    await sut.untilConsumed('notas-intake', 'notas-events');
    expect(handled).toEqual([1]);
    expect(await backlogOf('notas-intake')).toMatchObject({ pending: 0, unacknowledged: 0 });
  });

  it('takes down on close the services, then its own steps, the stream of its prefix, the bus and the database', async () => {
    const other = await harness('closing');
    const service = await other.start((env) => ({
      name: 'packages',
      schema: 'notas',
      migrations,
      config: loadConfig(BaseConfig, env),
      setup: async () => undefined,
    }));
    const stepsRun: string[] = [];
    other.onClose(() => stepsRun.push(`after the service: ${service.ctx.bus.isConnected()}`));
    expect(await databaseExists(other)).toBe(true);
    await other.close();
    expect(stepsRun).toEqual(['after the service: false']);
    expect(await databaseExists(other)).toBe(false);
    const jsm = await jetstreamManager(sut.bus.nc);
    await expect(jsm.streams.info(streamName(other.iso.subjectPrefix))).rejects.toThrow();
    expect(other.bus.isConnected()).toBe(false);
  });
});
