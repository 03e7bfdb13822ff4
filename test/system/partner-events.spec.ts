import { Webhook } from 'standardwebhooks';
import type { components } from '@erp/client';
import { MAX_SUBSCRIPTIONS } from '@erp/contracts';
import type { SeedOutput } from '@erp/back-office';
import { TestReceiver } from '../../services/subscriptions/test/receiver';
import { Stack, json } from '../support/stack';
import { eventually } from '@erp/testing';
import { API, SALES_KEY_A, SALES_KEY_B, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Partner events end to end through the gateway: a partner subscribes with its API key, the
 * sales and stock changes it makes arrive signed (verified with the Standard Webhooks reference
 * library) with the same object its GET answers, another company's never do, and the feed pages them.
 */
describe('partner events: /event-subscriptions, deliveries and /events', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;
  const receivers: TestReceiver[] = [];

  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await stack.api(`${API}${path}`, {
      key,
      method,
      ...(body !== undefined ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, headers: res.headers, body: (await json(res)) as any };
  };
  const receiver = async () => {
    const r = await TestReceiver.start();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'subscriptions'], subscriptions: { EVENTS_POLL_MS: '100' } });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
  });

  afterAll(async () => {
    await stack?.stop();
    for (const r of receivers) await r.stop();
  });

  it('subscribes, validates the body and keeps each company to its own subscriptions', async () => {
    const r = await receiver();
    const created = await call('POST', '/event-subscriptions', SALES_KEY_A, {
      url: r.url,
      events: ['sale.created'],
      descripcion: 'ERP del socio',
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(created.body.data).toMatchObject({ url: r.url, events: ['sale.created'], descripcion: 'ERP del socio', enable: 1 });
    expect(created.body.data.secret).toMatch(/^whsec_/);
    const id = created.body.data.id as number;

    const bad = await call('POST', '/event-subscriptions', SALES_KEY_A, { url: 'notaurl', events: ['sale.nope'] });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.details).sort()).toEqual(['events.0', 'url']);

    expect((await call('GET', `/event-subscriptions/${id}`, SALES_KEY_B)).status).toBe(404);
    expect((await call('DELETE', `/event-subscriptions/${id}`, SALES_KEY_B)).status).toBe(404);
    const read = await call('GET', `/event-subscriptions/${id}`, SALES_KEY_A);
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty('secret');
    expect((await call('GET', '/event-subscriptions', SALES_KEY_B)).body.data).toEqual([]);
    const deleted = await call('DELETE', `/event-subscriptions/${id}`, SALES_KEY_A);
    expect(deleted.status).toBe(200);
    expect((await call('GET', `/event-subscriptions/${id}`, SALES_KEY_A)).status).toBe(404);
  });

  it('delivers a sale and its stock change signed, with the sale as GET answers it, only to its own company; the feed and the deliveries list them', async () => {
    const ra = await receiver();
    const rb = await receiver();
    const subA = (await call('POST', '/event-subscriptions', SALES_KEY_A, { url: ra.url, events: ['*'] })).body.data;
    await call('POST', '/event-subscriptions', SALES_KEY_B, { url: rb.url, events: ['*'] });

    const sale = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, { estado: 'Pendiente', id_cliente: a.clientes.libre, detalles: [{ id_producto: a.productos.mouse, cantidad: 2 }] }),
    );
    expect(sale.status).toBe(201);
    const ventaId = sale.body.data.id as number;
    const updated = await call('PUT', `/sales/${ventaId}`, SALES_KEY_A, { detalles: [{ id_producto: a.productos.mouse, cantidad: 3 }] });
    expect(updated.status).toBe(200);

    await eventually(
      async () =>
        expect(ra.delivered().map((e) => e.type)).toEqual(expect.arrayContaining(['sale.created', 'sale.updated', 'stock.changed'])),
      20_000,
    );
    await eventually(async () => expect(ra.delivered().filter((e) => e.type === 'stock.changed')).toHaveLength(2), 20_000);
    const wh = new Webhook(subA.secret);
    const events = ra.received.filter((x) => x.answer === 'ok').map((x) => wh.verify(x.body, x.headers) as any);
    const saleEvents = events.filter((e) => e.type.startsWith('sale.'));
    expect(saleEvents.map((e) => e.type)).toEqual(['sale.created', 'sale.updated']);
    const current = await call('GET', `/sales/${ventaId}`, SALES_KEY_A);
    expect(saleEvents[1].data).toEqual(current.body.data);
    expect(saleEvents[0].data).toEqual(sale.body.data);
    // The generated types narrow `data` by `type`: a stock change's motivo and origen are enums.
    const typed = events as Array<components['schemas']['DeliveredEvent']>;
    const stock = typed.flatMap((e) => (e.type === 'stock.changed' ? [e.data] : []));
    expect(stock.map((d) => [d.motivo, d.origen])).toEqual([
      ['reserva', 'venta'],
      ['ajuste', 'actualizacion_venta'],
    ]);
    expect(stock.map((d) => [d.id_producto, d.id_bodega, d.cambio, d.id_venta])).toEqual([
      [a.productos.mouse, a.bodegas.principal, -2, ventaId],
      [a.productos.mouse, a.bodegas.principal, -1, ventaId],
    ]);
    const inventory = await call('GET', `/inventory/${a.productos.mouse}`, SALES_KEY_A);
    expect(inventory.status).toBe(200);
    expect(stock[1]!.codigo).toBe('MOU-01');
    expect(rb.received).toEqual([]);

    const feed = await call('GET', '/events?types=sale.created,sale.updated&per_page=1', SALES_KEY_A);
    expect(feed.status).toBe(200);
    expect(feed.body.data.map((e: any) => e.id)).toEqual([saleEvents[0].id]);
    expect(feed.body.pagination).toEqual({ per_page: 1, next_after: saleEvents[0].id, has_more: true });
    const next = await call('GET', `/events?after=${feed.body.pagination.next_after}&types=sale.created,sale.updated`, SALES_KEY_A);
    expect(next.body.data.map((e: any) => e.id)).toEqual([saleEvents[1].id]);
    expect(next.body.pagination.has_more).toBe(false);
    expect((await call('GET', '/events', SALES_KEY_B)).body.data).toEqual([]);
    expect((await call('GET', '/events?types=sale.exploded', SALES_KEY_A)).status).toBe(400);
    expect((await call('GET', `/events?after=${saleEvents[0].id}`, SALES_KEY_B)).status).toBe(400);

    // An attempt is recorded just after its answer: the list may lag the receiver by a moment.
    let deliveries: Awaited<ReturnType<typeof call>> | undefined;
    await eventually(async () => {
      deliveries = await call('GET', `/event-subscriptions/${subA.id}/deliveries?per_page=50`, SALES_KEY_A);
      expect(deliveries.status).toBe(200);
      expect(deliveries.body.data).toHaveLength(events.length);
    }, 10_000);
    expect(deliveries!.body.data.every((d: any) => d.status === 204 && d.attempt === 1)).toBe(true);

    const since = new Date(Date.now() - 60_000).toISOString();
    const replay = await call('POST', `/event-subscriptions/${subA.id}/replay`, SALES_KEY_A, { desde: since });
    expect(replay.status).toBe(202);
    expect(replay.body.data.encolados).toBe(events.length);
    await eventually(async () => expect(ra.delivered()).toHaveLength(events.length * 2), 20_000);
    expect(
      new Set(
        ra
          .delivered()
          .slice(events.length)
          .map((e) => e.id),
      ),
    ).toEqual(new Set(events.map((e) => e.id)));
    expect((await call('POST', `/event-subscriptions/${subA.id}/replay`, SALES_KEY_A, { desde: 'ayer' })).status).toBe(422);
  });

  it('changes a subscription (unknown fields refused by name), tests it with a ping and rotates its secret with both signatures during the overlap', async () => {
    const r = await receiver();
    const sub = (await call('POST', '/event-subscriptions', SALES_KEY_A, { url: r.url, events: ['sale.created'] })).body.data;
    const path = `/event-subscriptions/${sub.id}`;

    const unknown = await call('PATCH', path, SALES_KEY_A, { events: ['*'], evnts: ['*'] });
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.details)).toEqual(['evnts']);
    expect((await call('PATCH', path, SALES_KEY_A, {})).status).toBe(422);
    expect((await call('PATCH', path, SALES_KEY_A, { enable: 2 })).status).toBe(422);
    expect((await call('PATCH', path, SALES_KEY_B, { events: ['*'] })).status).toBe(404);
    expect((await call('GET', path, SALES_KEY_A)).body.data.events).toEqual(['sale.created']);
    const changed = await call('PATCH', path, SALES_KEY_A, { events: ['*'], descripcion: 'Todo' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ id: sub.id, url: r.url, events: ['*'], descripcion: 'Todo', enable: 1 });

    expect((await call('POST', `${path}/test`, SALES_KEY_A, { ahora: true })).status).toBe(422);
    // An action with no required field takes no body, as `curl -X POST` sends it.
    const test = await call('POST', `${path}/test`, SALES_KEY_A);
    expect(test.status).toBe(202);
    expect(test.body.data).toEqual({ event_id: expect.stringMatching(/^evt_/), type: 'ping' });
    await eventually(async () => expect(r.delivered().map((e) => e.id)).toContain(test.body.data.event_id), 20_000);
    const ping = new Webhook(sub.secret).verify(r.received.at(-1)!.body, r.received.at(-1)!.headers) as any;
    expect(ping).toMatchObject({ id: test.body.data.event_id, type: 'ping', data: { id_suscripcion: sub.id } });
    await eventually(async () => {
      const attempts = await call('GET', `${path}/deliveries`, SALES_KEY_A);
      expect(attempts.body.data[0]).toMatchObject({ event_id: test.body.data.event_id, type: 'ping', status: 204 });
    }, 10_000);
    const feed = await call('GET', '/events?per_page=500', SALES_KEY_A);
    expect(feed.body.data.map((e: any) => e.type)).not.toContain('ping');
    const everyType = await call('GET', '/events?types=*&per_page=500', SALES_KEY_A);
    expect(everyType.status).toBe(200);
    expect(everyType.body.data).toEqual(feed.body.data);

    expect((await call('POST', `${path}/rotate-secret`, SALES_KEY_B, {})).status).toBe(404);
    const rotated = await call('POST', `${path}/rotate-secret`, SALES_KEY_A);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(sub.secret);
    const overlap = Date.parse(rotated.body.data.secreto_anterior_hasta) - Date.now();
    expect(overlap).toBeGreaterThan(23.9 * 3600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);
    const before = r.delivered().length;
    const sale = await postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] }));
    expect(sale.status).toBe(201);
    await eventually(
      async () =>
        expect(
          r
            .delivered()
            .slice(before)
            .map((e) => e.type),
        ).toContain('sale.created'),
      20_000,
    );
    const delivery = r.received.slice(before).find((x) => (JSON.parse(x.body) as { type: string }).type === 'sale.created')!;
    expect(delivery.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [rotated.body.data.secret, sub.secret])
      expect((new Webhook(secret).verify(delivery.body, delivery.headers) as any).data.id).toBe(sale.body.data.id);

    const disabled = await call('PATCH', path, SALES_KEY_A, { enable: 0 });
    expect(disabled.body.data).toMatchObject({ enable: 0, motivo_deshabilitada: 'Deshabilitada por la empresa' });
    expect((await call('POST', `${path}/test`, SALES_KEY_A, {})).status).toBe(422);
    const enabled = await call('PATCH', path, SALES_KEY_A, { enable: 1 });
    expect(enabled.body.data).toMatchObject({ enable: 1, motivo_deshabilitada: null });

    // A new URL: the next delivery goes there, signed with the same secrets.
    const moved = await receiver();
    const changedUrl = await call('PATCH', path, SALES_KEY_A, { url: moved.url });
    expect(changedUrl.body.data).toMatchObject({ url: moved.url, events: ['*'], enable: 1 });
    const pingMoved = await call('POST', `${path}/test`, SALES_KEY_A, {});
    await eventually(async () => expect(moved.delivered().map((e) => e.id)).toContain(pingMoved.body.data.event_id), 20_000);
    expect(r.delivered().map((e) => e.id)).not.toContain(pingMoved.body.data.event_id);
    const pinged = moved.received.find((x) => (JSON.parse(x.body) as { id: string }).id === pingMoved.body.data.event_id)!;
    expect((new Webhook(rotated.body.data.secret).verify(pinged.body, pinged.headers) as any).type).toBe('ping');
  });

  it('refuses a subscription past the maximum of its company with 422 limite_suscripciones, and none of another company counts', async () => {
    const count = async (key: string) => (await call('GET', '/event-subscriptions', key)).body.data.length as number;
    const held = await count(SALES_KEY_B);
    for (let i = held; i < MAX_SUBSCRIPTIONS; i++) {
      expect(
        (await call('POST', '/event-subscriptions', SALES_KEY_B, { url: `http://127.0.0.1:9/limite-${i}`, events: ['*'] })).status,
      ).toBe(201);
    }
    const refused = await call('POST', '/event-subscriptions', SALES_KEY_B, { url: 'http://127.0.0.1:9/una-mas', events: ['*'] });
    expect([refused.status, refused.body.reason]).toEqual([422, 'limite_suscripciones']);
    expect(await count(SALES_KEY_B)).toBe(MAX_SUBSCRIPTIONS);
    expect(await count(SALES_KEY_A)).toBeLessThan(MAX_SUBSCRIPTIONS);
    expect((await call('POST', '/event-subscriptions', SALES_KEY_A, { url: 'http://127.0.0.1:9/de-a', events: ['*'] })).status).toBe(201);
  });
});
