import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { sql } from 'kysely';
import { publishEvent } from '@erp/bus';
import { isAppError, subscriptionsSubjects } from '@erp/contracts';
import type { RunningService } from '@erp/runtime';
import { tenant, until, type Harness } from '@erp/testing';
import type { SubscriptionsConfig } from '../src';
import { partnerEventId } from '../src/domain/partner-events';
import type { TestReceiver } from './receiver';
import { startReceiver, startSubscriptions, subscribe as subscribeOn, subscriptionsSpec } from './subscriptions.factories';

/**
 * The subscriptions service against Postgres and NATS: source events published on the real
 * stream, deliveries to real receivers on loopback that fail, time out and recover, signatures
 * checked with the Standard Webhooks reference library.
 */
const ROOT = path.resolve(__dirname, '../../..');

describe('subscriptions service against Postgres and NATS', () => {
  let h: Harness<unknown>;
  let settings: Record<string, string>;
  let service: RunningService<SubscriptionsConfig> | undefined;

  const request = <S extends keyof typeof subscriptionsSubjects & string>(
    empresa: number,
    subject: S,
    body: Parameters<typeof h.bus.request<typeof subscriptionsSubjects, S>>[2],
  ) => h.bus.request(subscriptionsSubjects, subject, body, tenant(empresa));
  const subscribe = (empresa: number, url: string, events?: string[]) => subscribeOn(h.bus, empresa, url, events);
  const receiver = () => startReceiver(h);
  const waitFor = (check: () => Promise<boolean> | boolean, ms = 20_000) => until(check, ms);
  /** Publishes a source event on the stream as a service's outbox relay would; answers the partner event id. */
  const publish = async (subject: string, payload: unknown) => {
    const msgId = randomUUID();
    await publishEvent(h.bus, subject, payload, { msgId });
    return partnerEventId(msgId, 0);
  };
  const saleEvent = (what: 'created' | 'updated' | 'annulled', empresa: number, id: number, version: number) =>
    publish(`events.sales.sale.${what}`, {
      empresa_id: empresa,
      id_venta: id,
      ...(what === 'created' ? { clave_reserva: null } : {}),
      venta: { id, version },
    });
  const verified = (r: TestReceiver, secret: string) => {
    const wh = new Webhook(secret);
    return r.received
      .filter((x) => x.answer === 'ok')
      .map((x) => wh.verify(x.body, x.headers) as { id: string; type: string; data: { id: number; version: number } });
  };

  beforeAll(async () => {
    ({
      h,
      settings,
      sut: service,
    } = await startSubscriptions('subscriptions', {
      EVENTS_RETRY_SCHEDULE_MS: '200,400,800',
      EVENTS_RETRY_WINDOW_MS: '4000',
      EVENTS_DELIVERY_TIMEOUT_MS: '1000',
      EVENTS_POLL_MS: '50',
    }));
  });

  afterAll(() => h?.close());

  it('creates a subscription with a whsec_ secret shown once, and refuses bad URLs, unknown types and a 21st subscription', async () => {
    const r = await receiver();
    const created = await subscribe(101, r.url, ['sale.created', 'stock.changed']);
    expect(created).toMatchObject({ url: r.url, events: ['sale.created', 'stock.changed'], enable: 1 });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const read = await request(101, 'subscriptions.subscription.get', { id: created.id });
    expect(read).not.toHaveProperty('secret');
    await expect(request(102, 'subscriptions.subscription.get', { id: created.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    await expect(subscribe(101, 'ftp://example.com/hook')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(subscribe(101, r.url, ['sale.exploded'])).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    for (let i = 1; i < 20; i++) await subscribe(101, r.url);
    const err = await subscribe(101, r.url).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('BUSINESS_RULE');
    const list = await request(101, 'subscriptions.subscription.list', { page: 1, per_page: 50 });
    expect(list.pagination.total).toBe(20);
    for (const s of list.items) await request(101, 'subscriptions.subscription.delete', { id: s.id });
  });

  it('delivers every event of the company, signed per Standard Webhooks, in order per resource, and nothing of another company', async () => {
    const a = await receiver();
    const b = await receiver();
    const subA = await subscribe(201, a.url);
    const subB = await subscribe(202, b.url, ['sale.created']);
    const ids: string[] = [];
    ids.push(await saleEvent('created', 201, 10, 1));
    ids.push(await saleEvent('updated', 201, 10, 2));
    const otherCompany = await saleEvent('created', 202, 20, 1);
    ids.push(await saleEvent('updated', 201, 10, 3));
    ids.push(await saleEvent('created', 201, 11, 1));
    ids.push(await saleEvent('annulled', 201, 11, 2));
    await saleEvent('updated', 202, 20, 2); // B did not ask for updates
    const stockMsg = randomUUID();
    await publishEvent(
      h.bus,
      'events.inventory.stock.changed',
      {
        empresa_id: 201,
        causa: { id_venta: 10 },
        movimientos: [
          {
            id_producto: 5,
            codigo: 'MOU-01',
            id_bodega: 7,
            stock: '8.000',
            cambio: '-2.000',
            motivo: 'reserva',
            origen: 'venta',
            referencia: 'venta-x',
          },
          {
            id_producto: 6,
            codigo: 'LIB-01',
            id_bodega: 7,
            stock: '1.500',
            cambio: '-0.500',
            motivo: 'reserva',
            origen: 'venta',
            referencia: 'venta-x',
          },
        ],
      },
      { msgId: stockMsg },
    );
    ids.push(partnerEventId(stockMsg, 0), partnerEventId(stockMsg, 1));

    await waitFor(() => a.delivered().length >= ids.length && b.delivered().length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    const got = verified(a, subA.secret);
    expect(new Set(got.map((e) => e.id))).toEqual(new Set(ids));
    const versionsOf = (venta: number) => got.filter((e) => e.data.id === venta).map((e) => e.data.version);
    expect(versionsOf(10)).toEqual([1, 2, 3]);
    expect(versionsOf(11)).toEqual([1, 2]);
    expect(got.find((e) => e.id === partnerEventId(stockMsg, 1))).toMatchObject({
      type: 'stock.changed',
      data: { id_producto: 6, codigo: 'LIB-01', id_bodega: 7, stock: 1.5, cambio: -0.5, id_venta: 10, id_devolucion: null },
    });
    expect(verified(b, subB.secret).map((e) => e.id)).toEqual([otherCompany]);
    // A delivery signed with another subscription's secret does not verify.
    expect(() => new Webhook(subB.secret).verify(a.received[0]!.body, a.received[0]!.headers)).toThrow();
  });

  it('retries a failing and a silent receiver with backoff, keeps the order of a resource meanwhile, and records every attempt', async () => {
    const r = await receiver();
    // Fails twice, then says nothing (the 1 s timeout), then recovers.
    r.behave = (_body, index) => (index < 2 ? 'fail' : index === 2 ? 'hang' : 'ok');
    const sub = await subscribe(301, r.url);
    const first = await saleEvent('created', 301, 30, 1);
    const second = await saleEvent('updated', 301, 30, 2);
    await waitFor(() => r.delivered().length >= 2);
    expect(verified(r, sub.secret).map((e) => e.id)).toEqual([first, second]);
    // Until the first was delivered, the second was never sent.
    expect(r.received.slice(0, 4).map((x) => (JSON.parse(x.body) as { id: string }).id)).toEqual([first, first, first, first]);

    // Attempts are recorded in batches just after their answers: the list may trail the receiver by a moment.
    const listed = () => request(301, 'subscriptions.delivery.list', { id: sub.id, page: 1, per_page: 10 });
    await waitFor(async () => (await listed()).items.length >= 5);
    const attempts = await listed();
    expect(attempts.items.map((x) => [x.event_id, x.attempt, x.status])).toEqual([
      [second, 1, 204],
      [first, 4, 204],
      [first, 3, null],
      [first, 2, 500],
      [first, 1, 500],
    ]);
    expect(attempts.items[2]!.error).toMatch(/Sin respuesta/);
    const sub2 = await request(301, 'subscriptions.subscription.get', { id: sub.id });
    expect(sub2.enable).toBe(1);
  });

  it('disables a subscription whose receiver keeps failing past the retry window, says why, and resumes its queue when enabled again', async () => {
    const r = await receiver();
    r.behave = () => 'fail';
    const sub = await subscribe(401, r.url);
    const owed = await saleEvent('created', 401, 40, 1);
    await waitFor(async () => (await request(401, 'subscriptions.subscription.get', { id: sub.id })).enable === 0, 15_000);
    const disabled = await request(401, 'subscriptions.subscription.get', { id: sub.id });
    expect(disabled.motivo_deshabilitada).toMatch(/HTTP 500/);
    const sent = r.received.length;
    await saleEvent('created', 401, 41, 1);
    await new Promise((res) => setTimeout(res, 800));
    expect(r.received.length).toBe(sent);

    r.behave = () => 'ok';
    await expect(request(402, 'subscriptions.subscription.update', { id: sub.id, enable: 1 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const enabled = await request(401, 'subscriptions.subscription.update', { id: sub.id, enable: 1 });
    expect(enabled).toMatchObject({ enable: 1, motivo_deshabilitada: null });
    // What it was owed when disabled goes out at once; what happened while it was disabled was never queued.
    await waitFor(() => r.delivered().length >= 1, 5_000);
    await new Promise((res) => setTimeout(res, 300));
    expect(verified(r, sub.secret).map((e) => e.id)).toEqual([owed]);
  });

  it('sends nothing after DELETE, and replays the events since a time with the same ids', async () => {
    const r = await receiver();
    const sub = await subscribe(501, r.url);
    const before = new Date().toISOString();
    const ids = [await saleEvent('created', 501, 50, 1), await saleEvent('updated', 501, 50, 2)];
    await waitFor(() => r.delivered().length >= 2);
    const replay = await request(501, 'subscriptions.subscription.replay', { id: sub.id, desde: before });
    expect(replay.encolados).toBe(2);
    await waitFor(() => r.delivered().length >= 4);
    expect(verified(r, sub.secret).map((e) => e.id)).toEqual([...ids, ...ids]);
    await expect(request(502, 'subscriptions.subscription.replay', { id: sub.id, desde: before })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(request(502, 'subscriptions.subscription.delete', { id: sub.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    await request(501, 'subscriptions.subscription.delete', { id: sub.id });
    const count = r.received.length;
    await saleEvent('updated', 501, 50, 3);
    await waitFor(async () => (await request(501, 'subscriptions.event.list', { per_page: 10 })).items.length === 3);
    await new Promise((res) => setTimeout(res, 800));
    expect(r.received.length).toBe(count);
  });

  it('pages the feed through a stream of concurrent events without a gap or a repeat, and filters by type', async () => {
    const empresa = 601;
    const published: string[] = [];
    const writer = (async () => {
      for (let i = 0; i < 60; i++) {
        published.push(await saleEvent(i % 3 === 0 ? 'created' : 'updated', empresa, 600 + (i % 7), i));
        if (i % 10 === 0)
          await publish('events.packages.package.imported', { empresa_id: empresa, paquetes: [{ id: i, wr: `WR${i}`, id_sucursal: 1 }] });
      }
    })();
    const seen: string[] = [];
    let after: string | undefined;
    let done = false;
    void writer.then(() => (done = true));
    for (;;) {
      const page = await request(empresa, 'subscriptions.event.list', {
        ...(after ? { after } : {}),
        types: ['sale.created', 'sale.updated'],
        per_page: 7,
      });
      seen.push(...page.items.map((e) => e.id));
      after = page.pagination.next_after ?? after;
      if (!page.pagination.has_more && done && seen.length >= published.length) break;
      if (!page.pagination.has_more) await new Promise((res) => setTimeout(res, 30));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(new Set(published));
    const packages = await request(empresa, 'subscriptions.event.list', { types: ['package.imported'], per_page: 100 });
    expect(packages.items).toHaveLength(6);
    await expect(request(empresa, 'subscriptions.event.list', { after: 'evt_unknown', per_page: 10 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect((await request(602, 'subscriptions.event.list', { per_page: 100 })).items).toEqual([]);
  });

  it('delivers an event at least once when the service is killed in the middle of its delivery', async () => {
    await service!.stop();
    service = undefined;
    const r = await receiver();
    let killed = false;
    let child: ChildProcess | undefined;
    r.behave = () => {
      if (killed) return 'ok';
      killed = true;
      child?.kill('SIGKILL');
      return 'hang';
    };
    const spawnService = () =>
      spawn(process.execPath, ['--conditions=development', '--import', 'tsx', 'services/subscriptions/src/main.ts'], {
        cwd: ROOT,
        env: { ...process.env, ...h.env(settings) },
        stdio: 'ignore',
      });
    child = spawnService();
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    const sub = await (async () => {
      for (;;) {
        try {
          return await subscribe(701, r.url);
        } catch {
          await new Promise((res) => setTimeout(res, 200));
        }
      }
    })();
    const id = await saleEvent('created', 701, 70, 1);
    await exited;
    expect(r.delivered()).toHaveLength(0);
    service = await h.start(subscriptionsSpec, { env: settings, migrate: false });
    await waitFor(() => r.delivered().length >= 1, 30_000);
    expect(verified(r, sub.secret).map((e) => e.id)).toEqual([id]);
    expect(r.received.map((x) => (JSON.parse(x.body) as { id: string }).id)).toEqual([id, id]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from subscriptions.eventos where id = ${id}`.execute(h.db);
    expect(rows[0]!.n).toBe(1);
  });
});
