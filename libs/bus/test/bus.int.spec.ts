import { randomUUID } from 'node:crypto';
import { context as otelContext, propagation, trace, ROOT_CONTEXT, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { DiscardPolicy, RetentionPolicy, StorageType, jetstreamManager } from '@nats-io/jetstream';
import { z } from 'zod';
import { AppError, DecimalNumber, defineCatalog, defineEvents, isAppError, pageReply, paginate, streamName } from '@erp/contracts';
import { inTransaction, sql } from '@erp/db';
import { createLogger, startOutboxRelay, type Worker } from '@erp/runtime';
import { harness, tenant, until, type Harness } from '@erp/testing';
import {
  Bus,
  JsonText,
  PoisonEventError,
  addOutboxOrder,
  checkEventStream,
  claimEvent,
  createOutboxTables,
  enqueueEvent,
  enqueueEvents,
  ensureConsumer,
  ensureEventStream,
  publishEvent,
  startConsumer,
  startConsumerPerSubject,
  type EventMeta,
} from '../src';

const catalog = defineCatalog({
  'echo.sum': {
    tenant: true,
    errors: ['BUSINESS_RULE'],
    request: z.object({ a: z.number(), b: z.number() }),
    reply: z.object({ sum: z.number(), empresa: z.number(), traceId: z.string().optional(), servedBy: z.string() }),
  },
  'echo.slow': { tenant: false, errors: [], request: z.object({ ms: z.number() }), reply: z.object({ done: z.boolean() }) },
});
const events = defineEvents({
  'events.test.thing.happened': { payload: z.object({ n: z.number().int() }) },
  'events.test.thing.undone': { payload: z.object({ n: z.number().int() }) },
});

const ctx = tenant(7, { nombre: 'Empresa Ñandú', requestId: 'bus-spec' });
const logger = createLogger('bus-spec', 'silent');

describe('Bus request/reply over NATS', () => {
  let h: Harness<unknown>;
  let client: Bus;
  let serverA: Bus;
  let serverB: Bus;
  const connect = (name: string) => h.connect(name, { requestTimeoutMs: 2_000 });

  beforeAll(async () => {
    otelContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    h = await harness('bus', { requestTimeoutMs: 2_000 });
    client = h.bus;
    [serverA, serverB] = await Promise.all([connect('a'), connect('b')]);
    for (const [server, name] of [
      [serverA, 'a'],
      [serverB, 'b'],
    ] as const) {
      server.serve(
        catalog,
        {
          'echo.sum': async ({ a, b }, c) => {
            if (a < 0) throw AppError.rule('importe_invalido', 'a no puede ser negativo', { a: ['debe ser >= 0'] });
            if (a === 13) throw new Error('secret internal detail');
            return { sum: a + b, empresa: c.empresa.id, traceId: trace.getSpanContext(otelContext.active())?.traceId, servedBy: name };
          },
          'echo.slow': async ({ ms }) => {
            await new Promise((resolve) => setTimeout(resolve, ms));
            return { done: true };
          },
        },
        { queue: 'echo' },
      );
    }
    // The servers' subscriptions reach NATS before the first request (a loaded machine may be slow to send them).
    await Promise.all([serverA.nc.flush(), serverB.nc.flush()]);
  });
  afterAll(() => h?.close());

  it('delivers the payload and the request context, and returns the typed reply', async () => {
    const reply = await client.request(catalog, 'echo.sum', { a: 2, b: 3 }, ctx);
    expect(reply).toMatchObject({ sum: 5, empresa: 7 });
  });

  it('carries the W3C trace context from the caller into the handler', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED });
    const reply = await otelContext.with(parent, () => client.request(catalog, 'echo.sum', { a: 1, b: 1 }, ctx));
    expect(reply.traceId).toBe(traceId);
  });

  it('spreads requests over the replicas of a queue group, each request handled once', async () => {
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) => client.request(catalog, 'echo.sum', { a: i, b: 0 }, ctx).catch(() => null)),
    );
    const ok = replies.filter((r) => r !== null);
    expect(ok).toHaveLength(59); // a = 13 fails on purpose
    const byServer = new Set(ok.map((r) => r!.servedBy));
    expect(byServer).toEqual(new Set(['a', 'b']));
  });

  it('returns a thrown AppError as the same typed error with its reason and details', async () => {
    const err = await client.request(catalog, 'echo.sum', { a: -1, b: 0 }, ctx).catch((e: unknown) => e);
    expect(isAppError(err) && { code: err.code, reason: err.reason, message: err.message, details: err.details }).toEqual({
      code: 'BUSINESS_RULE',
      reason: 'importe_invalido',
      message: 'a no puede ser negativo',
      details: { a: ['debe ser >= 0'] },
    });
  });

  it('refuses a payload that breaks the contract with VALIDATION_FAILED naming the field', async () => {
    const err = await client.request(catalog, 'echo.sum', { a: 'x', b: 1 } as never, ctx).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('VALIDATION_FAILED');
    expect((err as AppError).details).toHaveProperty('a');
  });

  it('refuses a tenant subject without a company in the context', async () => {
    const err = await client.request(catalog, 'echo.sum', { a: 1, b: 1 }, { requestId: 'no-company' }).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('UNAUTHORIZED');
  });

  it('hides unexpected errors behind INTERNAL with a reference', async () => {
    const err = await client.request(catalog, 'echo.sum', { a: 13, b: 0 }, ctx).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('INTERNAL');
    expect((err as AppError).message).toMatch(/^Error interno del servidor \(ref\. [0-9a-f-]{36}\)$/);
    expect((err as AppError).message).not.toContain('secret');
  });

  it('answers UNAVAILABLE at once when nobody serves the subject, TIMEOUT when the server is too slow', async () => {
    const started = Date.now();
    const none = await client
      .request(defineCatalog({ 'nobody.here': catalog['echo.slow'] }), 'nobody.here', { ms: 1 }, ctx)
      .catch((e: unknown) => e);
    expect(isAppError(none) && none.code).toBe('UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(500);
    const slow = await client.request(catalog, 'echo.slow', { ms: 400 }, ctx, { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(isAppError(slow) && slow.code).toBe('TIMEOUT');
  });

  it('finishes in-flight requests when a server drains', async () => {
    const extra = await connect('draining');
    extra.serve(
      catalog,
      {
        'echo.sum': async () => ({ sum: 0, empresa: 0, servedBy: 'x' }),
        'echo.slow': async ({ ms }) => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          return { done: true };
        },
      },
      { queue: 'other-group' },
    );
    const pending = client.request(catalog, 'echo.slow', { ms: 300 }, ctx);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await extra.drain();
    await expect(pending).resolves.toEqual({ done: true });
  });
});

const Item = z.object({ id: z.number().int(), precio: DecimalNumber, nombre: z.string() });
const jsonCatalog = defineCatalog({
  'json.item': { tenant: false, json: true, errors: [], request: z.object({ text: z.string() }), reply: Item },
  'json.page': {
    tenant: false,
    json: true,
    errors: [],
    request: z.object({ text: z.string(), count: z.number(), nombre: z.string() }),
    reply: pageReply(Item),
  },
  'json.values': { tenant: false, errors: [], request: z.object({}), reply: Item },
});

describe('Bus replies given as JSON text', () => {
  let h: Harness<unknown>;
  let checking: { client: Bus; server: Bus };
  let trusting: { client: Bus; server: Bus };
  const pair = async (prefix: string, validateReplies: boolean) => {
    const connect = (name: string) => h.connect(name, { prefix, requestTimeoutMs: 2_000, validateReplies });
    const [client, server] = await Promise.all([connect(`${prefix}-client`), connect(`${prefix}-server`)]);
    server.serve(
      jsonCatalog,
      {
        'json.item': async ({ text }) => new JsonText(text),
        'json.page': async ({ text, count, nombre }) => ({
          items: new JsonText(text),
          pagination: paginate({ page: 1, per_page: 10 }, count),
          filters_applied: { nombre },
        }),
        'json.values': async () => ({ id: 1, precio: '12.50', nombre: 'Café' }),
      },
      { queue: 'json' },
    );
    await server.nc.flush();
    return { client, server };
  };

  beforeAll(async () => {
    h = await harness('bus-json');
    const prefix = h.iso.subjectPrefix;
    [checking, trusting] = await Promise.all([pair(`${prefix}-checking`, true), pair(`${prefix}-trusting`, false)]);
  });
  afterAll(() => h?.close());

  it('passes the text through as the very bytes the handler gave, and a caller that parses reads the same values', async () => {
    const text = '{"id":1,"precio":12.5,"nombre":"Café ñandú"}';
    const bytes = await checking.client.requestJson(jsonCatalog, 'json.item', { text }, ctx);
    expect(bytes.toString('utf8')).toBe(text);
    await expect(checking.client.request(jsonCatalog, 'json.item', { text }, ctx)).resolves.toEqual(JSON.parse(text));
  });

  it("passes a page's items through as text beside its pagination and filters, whatever the characters before them", async () => {
    const text = '[{"id":1,"precio":0.1,"nombre":"Pingüino"},{"id":2,"precio":100,"nombre":"Ñu"}]';
    const { page, items } = await checking.client.requestJsonPage(jsonCatalog, 'json.page', { text, count: 2, nombre: 'cañón 🐧' }, ctx);
    expect(items.toString('utf8')).toBe(text);
    expect(page).toEqual({ pagination: paginate({ page: 1, per_page: 10 }, 2), filters_applied: { nombre: 'cañón 🐧' } });
    const parsed = await checking.client.request(jsonCatalog, 'json.page', { text, count: 2, nombre: 'cañón 🐧' }, ctx);
    expect(parsed.items).toEqual(JSON.parse(text));
  });

  it('gives a caller that wants text the serialised values of a handler that answered with values', async () => {
    const bytes = await checking.client.requestJson(jsonCatalog, 'json.values', {}, ctx);
    expect(bytes.toString('utf8')).toBe('{"id":1,"precio":12.5,"nombre":"Café"}');
  });

  it("refuses, where replies are checked, text the contract rejects or that differs from what the contract's output would write", async () => {
    for (const text of [
      '{"id":1,"precio":"caro","nombre":"a"}',
      '{"id":1,"precio":12.50,"nombre":"a"}',
      '{"nombre":"a","id":1,"precio":12.5}',
      '{"id":1,"precio":12.5,"nombre":"a","extra":true}',
      '{"id":1, "precio":12.5, "nombre":"a"}',
    ]) {
      const err = await checking.client.requestJson(jsonCatalog, 'json.item', { text }, ctx).catch((e: unknown) => e);
      expect({ text, code: isAppError(err) && err.code }).toEqual({ text, code: 'INTERNAL' });
    }
    const page = await checking.client
      .requestJsonPage(jsonCatalog, 'json.page', { text: '[{"id":1,"precio":1.0,"nombre":"a"}]', count: 1, nombre: 'a' }, ctx)
      .catch((e: unknown) => e);
    expect(isAppError(page) && page.code).toBe('INTERNAL');
  });

  it('passes the text unchecked where replies are not checked, as in production', async () => {
    const text = '{"id":1,"precio":12.50,"nombre":"a"}';
    const bytes = await trusting.client.requestJson(jsonCatalog, 'json.item', { text }, ctx);
    expect(bytes.toString('utf8')).toBe(text);
  });
});

describe('outbox, JetStream publishing and durable consumers', () => {
  let h: Harness<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  let bus: Bus;
  let relay: Required<Worker>;
  const seen: Array<{ n: number; meta: EventMeta }> = [];
  const failOnce = new Set<number>([2]);

  beforeAll(async () => {
    h = await harness('outbox', {
      schema: 'svc',
      migrations: { '0001': { up: (m) => createOutboxTables(m) }, '0002': { up: (m) => addOutboxOrder(m) } },
      poolMax: 4,
    });
    bus = h.bus;
    relay = startOutboxRelay({ db: h.db, bus, pollMs: 50 });
    bus.onDrain(() => relay.stop());
    await ensureEventStream(bus);
    await ensureConsumer(bus, 'spec-consumer', ['events.test.thing.happened']);
    await startConsumer(bus, {
      durable: 'spec-consumer',
      events,
      subjects: ['events.test.thing.happened'],
      backoffMs: [50],
      handler: async (_subject, payload, meta) => {
        if (payload.n === 99) throw new PoisonEventError('never valid');
        if (failOnce.delete(payload.n)) throw new AppError('UNAVAILABLE', 'try later');
        seen.push({ n: payload.n, meta });
      },
    });
  });
  afterAll(() => h?.close());

  const waitFor = (predicate: () => boolean | Promise<boolean>, ms = 5_000) => until(predicate, ms, 25);

  it('publishes committed events once, with the outbox id as event id and the request context', async () => {
    const ids = await inTransaction(h.db, async (trx) => [
      await enqueueEvent(trx, events, 'events.test.thing.happened', { n: 1 }, ctx),
      await enqueueEvent(trx, events, 'events.test.thing.happened', { n: 3 }, ctx),
    ]);
    relay.nudge();
    await waitFor(() => seen.some((s) => s.n === 3));
    const first = seen.find((s) => s.n === 1)!;
    expect(first.meta.eventId).toBe(ids[0]);
    expect(first.meta.ctx).toEqual(ctx);
    // The relay marks rows published when its transaction commits, which may come after delivery.
    const pending = () => h.db.selectFrom('outbox').select('id').where('published_at', 'is', null).execute();
    await waitFor(async () => (await pending()).length === 0);
    expect(await pending()).toEqual([]);
  });

  it('publishes the events of one transaction in the order they were written, whatever their clock stamps', async () => {
    const ns = Array.from({ length: 20 }, (_, i) => 120 + i);
    await inTransaction(h.db, async (trx) => {
      const ids = await enqueueEvents(
        trx,
        events,
        'events.test.thing.happened',
        ns.slice(0, 19).map((n) => ({ n })),
        ctx,
      );
      ids.push(await enqueueEvent(trx, events, 'events.test.thing.happened', { n: ns[19]! }, ctx));
      // One clock reading for all (a coarse clock, or statements within its resolution), rewritten
      // last row first so that the rows' physical and index order is the reverse of the written one.
      for (const id of [...ids].reverse())
        await trx
          .updateTable('outbox')
          .set({ created_at: new Date('2026-01-01T00:00:00Z') })
          .where('id', '=', id)
          .execute();
    });
    relay.nudge();
    await waitFor(() => ns.every((n) => seen.some((s) => s.n === n)));
    const published = seen.filter((s) => ns.includes(s.n)).sort((x, y) => x.meta.streamSequence - y.meta.streamSequence);
    expect(published.map((s) => s.n)).toEqual(ns);
  });

  it('publishes nothing for a rolled-back transaction', async () => {
    await expect(
      inTransaction(h.db, async (trx) => {
        await enqueueEvent(trx, events, 'events.test.thing.happened', { n: 50 }, ctx);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await inTransaction(h.db, (trx) => enqueueEvent(trx, events, 'events.test.thing.happened', { n: 51 }, ctx));
    relay.nudge();
    await waitFor(() => seen.some((s) => s.n === 51));
    expect(seen.some((s) => s.n === 50)).toBe(false);
  });

  it('redelivers after a retryable failure and terminates a poison event without calling the handler again', async () => {
    await inTransaction(h.db, async (trx) => {
      await enqueueEvent(trx, events, 'events.test.thing.happened', { n: 99 }, ctx);
      await enqueueEvent(trx, events, 'events.test.thing.happened', { n: 2 }, ctx);
    });
    relay.nudge();
    await waitFor(() => seen.some((s) => s.n === 2));
    expect(seen.find((s) => s.n === 2)!.meta.deliveryCount).toBe(2);
    expect(seen.some((s) => s.n === 99)).toBe(false);
  });

  it('drops a re-published event with the same id (a relay crash between publish and mark)', async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    await publishEvent(bus, 'events.test.thing.happened', { n: 70 }, { msgId: id });
    const second = await publishEvent(bus, 'events.test.thing.happened', { n: 70 }, { msgId: id });
    expect(second.duplicate).toBe(true);
    await waitFor(() => seen.some((s) => s.n === 70));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen.filter((s) => s.n === 70)).toHaveLength(1);
  });

  it('claims an event id once per consumer inside the effect’s transaction', async () => {
    const claim = () => inTransaction(h.db, (trx) => claimEvent(trx, 'c1', 'evt-1'));
    expect(await claim()).toBe(true);
    expect(await claim()).toBe(false);
    expect(await inTransaction(h.db, (trx) => claimEvent(trx, 'c2', 'evt-1'))).toBe(true);
    const rows = await sql<{ n: number }>`select count(*)::int as n from svc.processed_events`.execute(h.db);
    expect(rows.rows[0]!.n).toBe(2);
  });

  it('binds only to a durable the migration step made, reading the subjects the service expects', async () => {
    const handler = async () => undefined;
    await expect(
      startConsumer(bus, { durable: 'spec-never-made', events, subjects: ['events.test.thing.happened'], handler }),
    ).rejects.toThrow(/spec-never-made .*does not exist/);
    await expect(startConsumer(bus, { durable: 'spec-consumer', events, subjects: ['events.test.thing.undone'], handler })).rejects.toThrow(
      /reads .*thing\.happened/,
    );
  });

  it('starts one durable consumer per subject, each filtering on its own subject, all with the one handler', async () => {
    const handled: string[] = [];
    await ensureConsumer(bus, 'spec-each-happened', ['events.test.thing.happened']);
    await ensureConsumer(bus, 'spec-each-undone', ['events.test.thing.undone']);
    await startConsumerPerSubject(bus, {
      durables: { 'events.test.thing.happened': 'spec-each-happened', 'events.test.thing.undone': 'spec-each-undone' },
      events,
      handler: async (subject, payload) => {
        if (payload.n >= 200) handled.push(`${subject} ${payload.n}`);
      },
    });
    await publishEvent(bus, 'events.test.thing.happened', { n: 200 }, { msgId: randomUUID() });
    await publishEvent(bus, 'events.test.thing.undone', { n: 201 }, { msgId: randomUUID() });
    await waitFor(() => handled.length === 2);
    expect(handled.sort()).toEqual(['events.test.thing.happened 200', 'events.test.thing.undone 201']);
    const jsm = await jetstreamManager(bus.nc);
    const filters = await Promise.all(
      ['spec-each-happened', 'spec-each-undone'].map(
        async (durable) => (await jsm.consumers.info(streamName(h.iso.subjectPrefix), durable)).config.filter_subject,
      ),
    );
    expect(filters).toEqual([bus.subject('events.test.thing.happened'), bus.subject('events.test.thing.undone')]);
  });
});

describe('the events stream', () => {
  let h: Harness<unknown>;
  let bus: Bus;
  const nanos = (ms: number) => ms * 1_000_000;
  const settings = { replicas: 1, maxBytes: 64 * 1024 * 1024, maxAgeMs: 2 * 24 * 3600_000, duplicateWindowMs: 5 * 60_000 };

  beforeAll(async () => {
    h = await harness('stream');
    bus = await h.connect('stream-spec', { stream: settings });
  });
  afterAll(() => h?.close());

  it('brings a stream created with other settings to the configured limits at start, keeping its events', async () => {
    const jsm = await jetstreamManager(bus.nc);
    const name = streamName(h.iso.subjectPrefix);
    // As an older release left it: no size limit, an hour of events, two minutes of deduplication.
    await jsm.streams.add({
      name,
      subjects: [bus.subject('events.>')],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: nanos(3600_000),
      duplicate_window: nanos(120_000),
      discard: DiscardPolicy.Old,
    });
    await publishEvent(bus, 'events.test.thing.happened', { n: 1 }, { msgId: 'kept-1' });

    expect(await ensureEventStream(bus)).toBe(name);
    const sut = await jsm.streams.info(name);
    expect(sut.config).toMatchObject({
      num_replicas: 1,
      max_bytes: settings.maxBytes,
      max_age: nanos(settings.maxAgeMs),
      duplicate_window: nanos(settings.duplicateWindowMs),
      discard: DiscardPolicy.New,
    });
    expect(sut.state.messages).toBe(1);
    // A second start finds nothing to change.
    await ensureEventStream(bus);
    expect((await jsm.streams.info(name)).config.max_bytes).toBe(settings.maxBytes);
  });

  it('refuses a stream made with another retention, at the migration step and at a start, and leaves it as it was', async () => {
    const jsm = await jetstreamManager(bus.nc);
    const name = streamName(h.iso.subjectPrefix, 'intake');
    // Made by hand under limits: every delivery would be kept for the stream's age, not until processed.
    await jsm.streams.add({ name, subjects: [bus.subject('intake.>')], retention: RetentionPolicy.Limits, storage: StorageType.File });
    await publishEvent(bus, 'intake.test.thing.stored', { n: 1 }, { msgId: 'intake-kept-1' });

    const refusal = `The stream ${name} has limits retention but its events need workqueue`;
    await expect(ensureEventStream(bus, 'intake')).rejects.toThrow(refusal);
    await expect(checkEventStream(bus, 'intake')).rejects.toThrow(refusal);
    const after = await jsm.streams.info(name);
    expect(after.config.retention).toBe(RetentionPolicy.Limits);
    expect(after.state.messages).toBe(1);

    // Made again by the migration step, it is a work queue and a start accepts it.
    await jsm.streams.delete(name);
    expect(await ensureEventStream(bus, 'intake')).toBe(name);
    expect((await jsm.streams.info(name)).config.retention).toBe(RetentionPolicy.Workqueue);
    await expect(checkEventStream(bus, 'intake')).resolves.toBe(name);
  });

  it('lets a service start only once the stream exists, without creating it', async () => {
    const elsewhere = await Bus.connect({
      servers: h.iso.natsUrl,
      prefix: `${h.iso.subjectPrefix}_none`,
      name: 'stream-spec-none',
      logger,
    });
    try {
      await expect(checkEventStream(elsewhere)).rejects.toThrow(/does not exist: the migration step creates it/);
      await expect((await jetstreamManager(elsewhere.nc)).streams.info(streamName(`${h.iso.subjectPrefix}_none`))).rejects.toThrow();
    } finally {
      await elsewhere.drain();
    }
    await expect(checkEventStream(bus)).resolves.toBe(streamName(h.iso.subjectPrefix));
  });

  it('refuses to migrate or start with more replicas than the JetStream servers can hold, instead of running unreplicated', async () => {
    const replicated = await Bus.connect({
      servers: h.iso.natsUrl,
      prefix: h.iso.subjectPrefix,
      name: 'stream-spec-r3',
      logger,
      stream: { replicas: 3, maxBytes: -1, maxAgeMs: 3600_000, duplicateWindowMs: 60_000 },
    });
    try {
      await expect(ensureEventStream(replicated)).rejects.toThrow(/replica/i);
      // A service's start check refuses the stream the migration step made with one copy, from the one look it takes.
      await ensureEventStream(bus);
      await expect(checkEventStream(replicated)).rejects.toThrow(/keeps 1 replica\(s\) but 3 are configured/);
    } finally {
      await replicated.drain();
    }
  });
});
