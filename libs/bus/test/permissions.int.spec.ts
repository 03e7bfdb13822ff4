import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { DiscardPolicy, JetStreamApiError, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { z } from 'zod';
import {
  BUS_IDENTITIES,
  SERVICES,
  STREAM_FAMILIES,
  defineEvents,
  gatewayEvents,
  gatewaySubjects,
  returnsForSalesSubjects,
  salesEvents,
  salesForReturnsSubjects,
  streamFamiliesOf,
  streamFamilyOf,
  streamName,
  webhookGatewaySubjects,
  webhookIntakeEvents,
} from '@erp/contracts';
import { createLogger } from '@erp/runtime';
import { freePort, tenant, until, waitForPort } from '@erp/testing';
import {
  Bus,
  EXPORT_WRITERS,
  checkEventStream,
  deleteObject,
  ensureExportStore,
  exportStoreName,
  natsAuthorizationConfig,
  provisionJetStream,
  publishEvent,
  putNdjsonGzip,
  readObjectFrom,
  startConsumer,
} from '../src';

const NATS_SERVER = '/usr/sbin/nats-server';
const PREFIX = 'perm';
const logger = createLogger('permissions-spec', 'silent');
const ctx = tenant(1, { requestId: 'permissions-spec' });
const password = (identity: string) => `pw-${identity}-0f3a`;

async function bytesOf(file: Readable | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file!) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A private nats-server configured with the generated permissions, each bus identity with its own
 * password: what deploy/k8s runs, on a free loopback port.
 */
describe('bus identities on a nats-server with the generated permissions', () => {
  let dir: string;
  let server: ChildProcess;
  let url: string;
  const buses: Bus[] = [];
  const connectAs = async (identity: string) => {
    const bus = await Bus.connect({
      servers: url,
      prefix: PREFIX,
      name: identity,
      logger,
      requestTimeoutMs: 2_000,
      credentials: { user: identity, password: password(identity) },
    });
    buses.push(bus);
    return bus;
  };
  const managerOf = async (identity: string) =>
    jetstreamManager((buses.find((b) => b.options.name === identity) ?? (await connectAs(identity))).nc);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-nats-perm-'));
    const port = await freePort();
    const config = path.join(dir, 'nats.conf');
    fs.writeFileSync(
      config,
      `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(path.join(dir, 'js'))} }\n` +
        natsAuthorizationConfig(PREFIX, (identity) => ({ literal: password(identity) })),
    );
    server = spawn(NATS_SERVER, ['-c', config], { stdio: 'ignore' });
    url = `nats://127.0.0.1:${port}`;
    await waitForPort(port, 10_000);
    // What the migration step does before any service starts.
    await provisionJetStream(await connectAs('operator'), SERVICES);
  });
  afterAll(async () => {
    for (const bus of buses) await bus.drain().catch(() => undefined);
    server?.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a connection without credentials or with another identity’s password', async () => {
    await expect(Bus.connect({ servers: url, prefix: PREFIX, name: 'anonymous', logger })).rejects.toThrow(/authoriz/i);
    await expect(
      Bus.connect({
        servers: url,
        prefix: PREFIX,
        name: 'impostor',
        logger,
        credentials: { user: 'admin', password: password('webhook-ingest') },
      }),
    ).rejects.toThrow(/authoriz/i);
  });

  it('lets the admin identity call an admin subject, and no service identity', async () => {
    const gateway = await connectAs('gateway');
    gateway.serve(
      gatewaySubjects,
      {
        'gateway.admin.apikey.create': async () => ({ id: 1, key: 'erp_minted_key', prefix: 'erp_mint', alcances: ['sales:read'] }),
      } as never,
      { queue: 'gateway' },
    );
    // A flush returns once the server has the subscriptions: another connection's request then finds them.
    await gateway.nc.flush();
    const admin = await connectAs('admin');
    await expect(admin.request(gatewaySubjects, 'gateway.admin.apikey.create', { empresa_id: 1 }, ctx)).resolves.toMatchObject({
      key: 'erp_minted_key',
    });
    for (const identity of ['webhook-ingest', 'sales', 'inventory']) {
      const service = await connectAs(identity);
      await expect(service.request(gatewaySubjects, 'gateway.admin.apikey.create', { empresa_id: 1 }, ctx)).rejects.toThrow();
    }
  });

  it('keeps a service from reading events it has no business with', async () => {
    const gateway = buses.find((b) => b.options.name === 'gateway')!;
    const webhooks = buses.find((b) => b.options.name === 'webhook-ingest')!;
    // Listening as they pass: the subscription is refused, so the gateway's event never arrives.
    const overheard: unknown[] = [];
    webhooks.subscribeAll('events.gateway.credentials.changed', (_subject, payload) => void overheard.push(payload));
    await publishEvent(gateway, 'events.gateway.credentials.changed', { empresa_id: 1 }, { msgId: 'credentials-1' });
    // Through JetStream: neither another service's durable, nor its own name over another subject.
    const handler = async () => undefined;
    await expect(
      startConsumer(webhooks, { durable: 'inventory-sale-created', events: salesEvents, subjects: ['events.sales.sale.created'], handler }),
    ).rejects.toThrow();
    await expect(
      startConsumer(webhooks, {
        durable: 'webhook-ingest-deliveries',
        events: gatewayEvents,
        subjects: ['events.gateway.credentials.changed'],
        handler,
      }),
    ).rejects.toThrow();
    // Nor can it publish an event in another service's name.
    const forged = defineEvents({ 'events.sales.sale.created': { payload: z.object({ id_venta: z.number() }) } });
    await expect(
      publishEvent(webhooks, 'events.sales.sale.created', forged['events.sales.sale.created'].payload.parse({ id_venta: 1 }), {
        msgId: 'forged-1',
      }),
    ).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 300));
    expect(overheard).toEqual([]);
  });
  it('lets each service check at start the streams it uses, and read the info of no other', async () => {
    for (const service of SERVICES) {
      const bus = buses.find((b) => b.options.name === service) ?? (await connectAs(service));
      const uses = streamFamiliesOf(BUS_IDENTITIES[service]);
      for (const family of STREAM_FAMILIES) {
        const check = checkEventStream(bus, family);
        if (uses.includes(family)) await expect(check).resolves.toBe(streamName(PREFIX, family));
        else await expect(check).rejects.toThrow(/[Pp]ermission/);
      }
    }
    // Only the shops' intake reads the intake stream; every service publishes or reads events.
    expect(SERVICES.filter((service) => streamFamiliesOf(BUS_IDENTITIES[service]).includes('intake'))).toEqual(['webhook-ingest']);
  });

  it('lets a service call what it needs, publish its events and consume them on its own durable', async () => {
    const gateway = buses.find((b) => b.options.name === 'gateway')!;
    gateway.serve(
      webhookGatewaySubjects,
      { 'gateway.webhook.context': async () => ({ empresa: null, usuario: null }) },
      { queue: 'gateway' },
    );
    await gateway.nc.flush();
    const webhooks = buses.find((b) => b.options.name === 'webhook-ingest')!;
    await expect(
      webhooks.request(webhookGatewaySubjects, 'gateway.webhook.context', { empresa_id: 1, usuario_id: 1 }, ctx),
    ).resolves.toEqual({ empresa: null, usuario: null });

    const seen: number[] = [];
    await startConsumer(webhooks, {
      durable: 'webhook-ingest-deliveries',
      events: webhookIntakeEvents,
      subjects: ['intake.webhooks.delivery.received'],
      handler: async (_subject, payload) => void seen.push(payload.id_entrega),
    });
    await publishEvent(webhooks, 'intake.webhooks.delivery.received', { id_entrega: 41, empresa_id: 1 }, { msgId: 'delivery-41' });
    await until(() => seen.includes(41), 5_000);
  });

  it('lets a return register with its sale, and sales ask returns which registrations became returns, and nobody else', async () => {
    const sales = await connectAs('sales');
    const returns = await connectAs('returns');
    const venta = {
      id: 7,
      estado: 'Completada' as const,
      fecha: '2026-03-10',
      correlativo: 'FAC-7',
      id_bodega: 2,
      nombre_cliente: null,
      detalles: [],
    };
    sales.serve(
      salesForReturnsSubjects,
      {
        'sales.sale.returnable': async () => venta,
        'sales.sale.return.register': async () => venta,
        'sales.sale.return.square': async () => ({ devoluciones_activas: 0 }),
      },
      { queue: 'sales' },
    );
    returns.serve(
      returnsForSalesSubjects,
      { 'returns.sale.registrations': async () => ({ ocupada: false, devoluciones: [] }) },
      { queue: 'returns' },
    );
    await Promise.all([sales.nc.flush(), returns.nc.flush()]);
    await expect(
      returns.request(salesForReturnsSubjects, 'sales.sale.return.register', { id_venta: 7, clave: 'devolucion-1' }, ctx),
    ).resolves.toMatchObject({ id: 7 });
    await expect(returns.request(salesForReturnsSubjects, 'sales.sale.return.square', { id_venta: 7 }, ctx)).resolves.toEqual({
      devoluciones_activas: 0,
    });
    await expect(
      sales.request(returnsForSalesSubjects, 'returns.sale.registrations', { empresa_id: 1, id_venta: 7, claves: ['devolucion-1'] }, ctx),
    ).resolves.toEqual({ ocupada: false, devoluciones: [] });
    const inventory = await connectAs('inventory');
    await expect(
      inventory.request(
        returnsForSalesSubjects,
        'returns.sale.registrations',
        { empresa_id: 1, id_venta: 7, claves: ['devolucion-1'] },
        ctx,
      ),
    ).rejects.toThrow();
    await expect(
      inventory.request(salesForReturnsSubjects, 'sales.sale.return.register', { id_venta: 7, clave: 'devolucion-2' }, ctx),
    ).rejects.toThrow();
  });

  describe('JetStream, which only the operator identity manages', () => {
    const stream = streamName(PREFIX);
    const streamConfig = async () => (await (await managerOf('operator')).streams.info(stream)).config;

    it('refuses a service that sets max_msgs on the stream or adds subjects to it, and the stream stays as it was', async () => {
      const before = await streamConfig();
      const packages = await managerOf('packages');
      await expect(packages.streams.update(stream, { ...before, max_msgs: 1, discard: DiscardPolicy.Old })).rejects.toThrow(/permission/i);
      await expect(packages.streams.update(stream, { ...before, subjects: [...before.subjects, `${PREFIX}.sales.>`] })).rejects.toThrow(
        /permission/i,
      );
      for (const identity of SERVICES) {
        const jsm = await managerOf(identity);
        await expect(jsm.streams.add({ name: `${identity.replace(/-/g, '_')}_OWN`, subjects: [`${PREFIX}.sales.>`] })).rejects.toThrow(
          /permission/i,
        );
        await expect(jsm.streams.purge(stream)).rejects.toThrow(/permission/i);
        await expect(jsm.streams.delete(stream)).rejects.toThrow(/permission/i);
      }
      expect(await streamConfig()).toEqual(before);
      // What a service may do: read the stream's info.
      await expect((await managerOf('packages')).streams.info(stream)).resolves.toMatchObject({ config: { name: stream } });
    });

    it('keeps the operator from emptying the events stream: no update (max_msgs: 1), no create over it with another configuration, no purge, no delete', async () => {
      await publishEvent(
        buses.find((b) => b.options.name === 'returns') ?? (await connectAs('returns')),
        'events.returns.return.created',
        { empresa_id: 1, id_devolucion: 3, id_venta: 7 },
        { msgId: 'return-3' },
      );
      const operator = await managerOf('operator');
      const before = await operator.streams.info(stream);
      expect(before.state.messages).toBeGreaterThan(1);
      await expect(operator.streams.update(stream, { ...before.config, max_msgs: 1, discard: DiscardPolicy.Old })).rejects.toThrow(
        /permission/i,
      );
      // A create names the stream in its subject, which the operator may: the server refuses it over a stream that exists.
      await expect(operator.streams.add({ ...before.config, max_msgs: 1 })).rejects.toThrow(/already in use/i);
      await expect(operator.streams.purge(stream)).rejects.toThrow(/permission/i);
      await expect(operator.streams.delete(stream)).rejects.toThrow(/permission/i);
      const after = await operator.streams.info(stream);
      expect(after.config).toEqual(before.config);
      expect(after.state.messages).toBe(before.state.messages);
    });

    it('lets the operator make only the declared durables, each over its one event, and never turn one into a push consumer', async () => {
      const inventory = buses.find((b) => b.options.name === 'inventory') ?? (await connectAs('inventory'));
      const delivered: string[] = [];
      const sub = inventory.nc.subscribe(`${PREFIX}.inventory.admin.seed`, { callback: (_err, msg) => void delivered.push(msg.subject) });
      await inventory.nc.flush();
      const operator = await managerOf('operator');
      const pushed = { deliver_subject: `${PREFIX}.inventory.admin.seed` };
      // Under a name nobody declared, as an ephemeral consumer, or a declared name over another event: no permission.
      await expect(
        operator.consumers.add(stream, { durable_name: 'empuje', filter_subject: `${PREFIX}.events.returns.return.created`, ...pushed }),
      ).rejects.toThrow(/permission/i);
      await expect(
        operator.consumers.add(stream, { filter_subject: `${PREFIX}.events.returns.return.created`, ...pushed }),
      ).rejects.toThrow(/permission/i);
      await expect(
        operator.consumers.add(stream, { durable_name: 'sales-return-created', filter_subject: `${PREFIX}.events.sales.sale.created` }),
      ).rejects.toThrow(/permission/i);
      // A declared durable, which the migration step made a pull consumer: the server refuses to make it push.
      // Its configuration as it is, but for what only a pull consumer has, with a deliver subject.
      const { max_waiting: _pullOnly, ...asIs } = (await operator.consumers.info(stream, 'sales-return-created')).config;
      const turned = await operator.consumers.add(stream, { ...asIs, ...pushed }).catch((err: unknown) => err);
      // Refused by JetStream itself (on 2.9: "max waiting can not be updated"; a pull consumer's setting a push one may not have).
      expect(turned).toBeInstanceOf(JetStreamApiError);
      expect(String(turned)).not.toMatch(/permission/i);
      // Nor delete it, to make it again as a push consumer.
      await expect(operator.consumers.delete(stream, 'sales-return-created')).rejects.toThrow(/permission/i);
      await publishEvent(
        buses.find((b) => b.options.name === 'returns') ?? (await connectAs('returns')),
        'events.returns.return.created',
        { empresa_id: 1, id_devolucion: 4, id_venta: 7 },
        { msgId: 'return-4' },
      );
      await new Promise((r) => setTimeout(r, 300));
      sub.unsubscribe();
      expect(delivered).toEqual([]);
      for (const [durable] of Object.entries(BUS_IDENTITIES.sales.consumers)) {
        expect((await operator.consumers.info(stream, durable)).config.deliver_subject).toBeUndefined();
      }
      // No consumer but the declared ones, each on the stream that carries its event.
      const declared = SERVICES.flatMap((service) => Object.values(BUS_IDENTITIES[service].consumers as Record<string, string>));
      for (const family of STREAM_FAMILIES) {
        expect({ family, consumers: (await operator.streams.info(streamName(PREFIX, family))).state.consumer_count }).toEqual({
          family,
          consumers: declared.filter((event) => streamFamilyOf(event) === family).length,
        });
      }
      expect(STREAM_FAMILIES.map((family) => declared.filter((event) => streamFamilyOf(event) === family).length)).not.toContain(0);
    });

    it('refuses a push consumer delivering the stream to a back-office subject, for every service identity', async () => {
      const sales = buses.find((b) => b.options.name === 'sales')!;
      const annulled: string[] = [];
      const sub = sales.nc.subscribe(`${PREFIX}.sales.admin.annul`, { callback: (_err, msg) => void annulled.push(msg.subject) });
      for (const identity of SERVICES) {
        const jsm: JetStreamManager = await managerOf(identity);
        await expect(
          jsm.consumers.add(stream, {
            durable_name: 'sales-return-created',
            filter_subject: `${PREFIX}.events.returns.return.created`,
            deliver_subject: `${PREFIX}.sales.admin.annul`,
          }),
        ).rejects.toThrow(/permission/i);
      }
      await publishEvent(
        buses.find((b) => b.options.name === 'returns') ?? (await connectAs('returns')),
        'events.returns.return.created',
        { empresa_id: 1, id_devolucion: 5, id_venta: 7 },
        { msgId: 'return-5' },
      );
      await sales.nc.flush();
      await new Promise((r) => setTimeout(r, 300));
      sub.unsubscribe();
      expect(annulled).toEqual([]);
      // The durable the operator made is still the pull consumer it was.
      const consumer = await (await managerOf('operator')).consumers.info(stream, 'sales-return-created');
      expect(consumer.config.deliver_subject).toBeUndefined();
    });
  });

  it('lets the gateway publish only the subjects it calls: not erp.inventory.stock.adjust, which sales may', async () => {
    const inventory = buses.find((b) => b.options.name === 'inventory') ?? (await connectAs('inventory'));
    const received: string[] = [];
    const sub = inventory.nc.subscribe(`${PREFIX}.inventory.stock.adjust`, { callback: (_err, msg) => void received.push(msg.string()) });
    await inventory.nc.flush();
    const gateway = buses.find((b) => b.options.name === 'gateway')!;
    const sales = buses.find((b) => b.options.name === 'sales')!;
    gateway.nc.publish(`${PREFIX}.inventory.stock.adjust`, 'from the gateway');
    sales.nc.publish(`${PREFIX}.inventory.stock.adjust`, 'from sales');
    await Promise.all([gateway.nc.flush(), sales.nc.flush()]);
    await until(() => received.includes('from sales'), 5_000, 25);
    sub.unsubscribe();
    expect(received.filter((m) => m !== 'from sales')).toEqual([]);
  });

  describe('export files, each writer in a store of its own', () => {
    const settings = { replicas: 1, maxBytes: -1, maxAgeMs: 3_600_000 };
    const file = 'sales/permisos.ndjson.gz';
    const salesStream = `OBJ_${exportStoreName(PREFIX, 'sales')}`;
    const lines = async function* () {
      yield { count: 2, lines: '{"id":1}\n{"id":2}\n' };
    };
    let whole: Buffer;
    const stored = async () =>
      bytesOf(
        await readObjectFrom(
          buses.find((b) => b.options.name === 'gateway')!,
          file,
        ),
      );
    const messages = async () => (await (await managerOf('operator')).streams.info(salesStream)).state.messages;

    beforeAll(async () => {
      const exportsBus = await connectAs('exports');
      // Like the events stream, only the operator creates the stores (their subjects included).
      await expect(ensureExportStore(exportsBus, settings)).rejects.toThrow(/permission/i);
      await ensureExportStore(await connectAs('operator'), settings);
      await expect(putNdjsonGzip(await connectAs('sales'), file, lines())).resolves.toMatchObject({ objetos: 2 });
      whole = await stored();
    });

    it('lets the operator make one store per writer, with direct get allowed', async () => {
      for (const writer of EXPORT_WRITERS) {
        const info = await (await managerOf('operator')).streams.info(`OBJ_${exportStoreName(PREFIX, writer)}`);
        expect({ writer, allowDirect: info.config.allow_direct }).toEqual({ writer, allowDirect: true });
      }
    });

    it('lets the gateway read a file, a range too, without a consumer; no other service reads it, the exports service included', async () => {
      expect(gunzipSync(whole).toString()).toBe('{"id":1}\n{"id":2}\n');
      const gateway = buses.find((b) => b.options.name === 'gateway')!;
      // A download resumed with Range: the same bytes from the 10th on.
      expect(await bytesOf(await readObjectFrom(gateway, file, 10))).toEqual(whole.subarray(10));
      expect(await bytesOf(await readObjectFrom(gateway, file, 3, 7))).toEqual(whole.subarray(3, 8));
      for (const identity of ['packages', 'inventory', 'returns', 'exports']) {
        await expect(readObjectFrom(await connectAs(identity), file)).rejects.toThrow(/permission/i);
      }
      // By JetStream's API directly: neither a direct get of its metadata nor the stream leader's message get.
      const inventory = await managerOf('inventory');
      await expect(inventory.direct.getMessage(salesStream, { seq: 1 })).rejects.toThrow(/permission/i);
      await expect(inventory.streams.getMessage(salesStream, { seq: 1 })).rejects.toThrow(/permission/i);
    });

    it('keeps another writer, the exports service and the gateway from overwriting, removing or purging a writer’s files', async () => {
      const before = await messages();
      const gateway = buses.find((b) => b.options.name === 'gateway')!;
      await expect(putNdjsonGzip(gateway, 'sales/forjado.ndjson.gz', lines())).rejects.toThrow();
      for (const identity of ['inventory', 'returns', 'exports', 'gateway']) {
        const bus = buses.find((b) => b.options.name === identity) ?? (await connectAs(identity));
        // Its metadata replaced by a deletion mark, as a removal writes it.
        await expect(
          jetstream(bus.nc).publish(
            `$O.${exportStoreName(PREFIX, 'sales')}.M.${Buffer.from(file).toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}`,
            JSON.stringify({ name: file, deleted: true }),
            { timeout: 1_000 },
          ),
        ).rejects.toThrow();
        await expect(deleteObject(bus, file)).rejects.toThrow();
        await expect((await managerOf(identity)).streams.purge(salesStream)).rejects.toThrow(/permission/i);
      }
      expect(await messages()).toBe(before);
      expect(await stored()).toEqual(whole);
    });

    it('lets no writer purge even its own store: a file is removed by publishing to its subjects', async () => {
      const sales = buses.find((b) => b.options.name === 'sales')!;
      await expect((await managerOf('sales')).streams.purge(salesStream)).rejects.toThrow(/permission/i);
      await expect((await managerOf('sales')).streams.purge(salesStream, { filter: '$O.>' })).rejects.toThrow(/permission/i);
      expect(await stored()).toEqual(whole);
      await putNdjsonGzip(sales, 'sales/efimero.ndjson.gz', lines());
      await expect(deleteObject(sales, 'sales/efimero.ndjson.gz')).resolves.toBe(true);
      await expect(
        readObjectFrom(
          buses.find((b) => b.options.name === 'gateway')!,
          'sales/efimero.ndjson.gz',
        ),
      ).resolves.toBeUndefined();
      expect(await stored()).toEqual(whole);
    });

    it('lets no service create a consumer on a store: not one pushing it to a back-office subject, not the ordered consumer nats.js reads a file with', async () => {
      for (const identity of SERVICES) {
        const jsm = await managerOf(identity);
        for (const writer of EXPORT_WRITERS) {
          await expect(
            jsm.consumers.add(`OBJ_${exportStoreName(PREFIX, writer)}`, {
              deliver_subject: `${PREFIX}.sales.admin.annul`,
              filter_subject: `$O.${exportStoreName(PREFIX, writer)}.>`,
            }),
          ).rejects.toThrow(/permission/i);
        }
      }
      const gateway = buses.find((b) => b.options.name === 'gateway')!;
      await expect(new Objm(gateway.nc).open(exportStoreName(PREFIX, 'sales')).then((store) => store.getBlob(file))).rejects.toThrow(
        /permission/i,
      );
      expect((await (await managerOf('operator')).streams.info(salesStream)).state.consumer_count).toBe(0);
    });

    it('keeps the operator from purging, emptying by an update, or deleting a store', async () => {
      const operator = await managerOf('operator');
      const before = await messages();
      const { config } = await operator.streams.info(salesStream);
      await expect(operator.streams.purge(salesStream)).rejects.toThrow(/permission/i);
      await expect(operator.streams.update(salesStream, { ...config, max_msgs: 1 })).rejects.toThrow(/permission/i);
      await expect(operator.streams.delete(salesStream)).rejects.toThrow(/permission/i);
      // The migration step with other limits: it logs the difference and leaves the stores as they are.
      await ensureExportStore(
        buses.find((b) => b.options.name === 'operator')!,
        { ...settings, maxAgeMs: 1_000 },
      );
      expect((await operator.streams.info(salesStream)).config).toEqual(config);
      expect(await messages()).toBe(before);
      expect(await stored()).toEqual(whole);
    });
  });
});
