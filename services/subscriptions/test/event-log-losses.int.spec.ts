import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { jetstreamManager } from '@nats-io/jetstream';
import { publishEvent } from '@erp/bus';
import { streamName, subscriptionsSubjects } from '@erp/contracts';
import { configuredUrls, tenant, until, type Harness } from '@erp/testing';
import type { Kysely } from 'kysely';
import { EVENT_LOG_CONSUMER } from '../src/consumers/source-events.consumer';
import { entregaBacklog } from '../src/db/entrega.repository';
import type { SubscriptionsDb } from '../src/db/tables';
import { partnerEventId } from '../src/domain/partner-events';
import { startReceiver, startSubscriptions, subscribe } from './subscriptions.factories';

/**
 * Interleavings that lost partner events of acknowledged writes, or put them out of order: the
 * event log's write failed for a reason that was not the event's own, the consumer took the
 * failure for the event's and terminated it, and with it every event written in the same
 * transaction; an event whose write failed came back after a later event of its resource and was
 * logged and delivered after it. Forced here with the real service, its stream and its database: a
 * subscription deleted while an event is being logged, an event the database refuses sharing a
 * write with a package import's, a sale's first event failing its first writes.
 */
describe('the event log loses no event of an acknowledged write, and keeps their order', () => {
  let h: Harness<unknown>;
  let admin: pg.Client;

  beforeAll(async () => {
    ({ h } = await startSubscriptions('eventlog-losses', { EVENTS_POLL_MS: '50' }));
    admin = new pg.Client({ connectionString: h.iso.databaseUrl });
    // The last test ends every connection of the database: a client of the test's own reports it here.
    admin.on('error', () => undefined);
    await admin.connect();
    h.onClose(() => admin.end());
  });
  afterAll(() => h?.close());

  const feed = async (empresa: number) =>
    (await h.bus.request(subscriptionsSubjects, 'subscriptions.event.list', { per_page: 100 }, tenant(empresa))).items.map((e) => e.id);
  /** Publishes a source event as a service's outbox relay does; answers its partner event id. */
  const publish = async (subject: string, payload: unknown) => {
    const msgId = randomUUID();
    await publishEvent(h.bus, subject, payload, { msgId });
    return partnerEventId(msgId, 0);
  };
  const imported = (empresa: number, ids: number[]) =>
    publish('events.packages.package.imported', {
      empresa_id: empresa,
      paquetes: ids.map((id) => ({ id, wr: `WR-${id}`, id_sucursal: 1 })),
    });
  /** Whether a backend waits on a lock whose query mentions `what` (read apart from `admin`, whose transaction would see one snapshot of the activity). */
  const waitingOn = async (what: string) => {
    const rows = await h.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike $1`,
      [`%${what}%`],
    );
    return rows[0]!.n > 0;
  };
  const untilLogged = (empresa: number, id: string, ms = 10_000) =>
    until(async () => (await feed(empresa)).includes(id), ms, 50, `event ${id} in the log of company ${empresa}`);

  it('logs an event while one of its company’s subscriptions is deleted, owing it to the ones left', async () => {
    const receiver = await startReceiver(h);
    const kept = await subscribe(h.bus, 401, receiver.url);
    const deleted = await subscribe(h.bus, 401, receiver.url);
    // The partner deletes a subscription: its transaction holds the row until it commits.
    await admin.query('begin');
    await admin.query('delete from subscriptions.suscripciones where id = $1', [deleted.id]);
    const id = await imported(401, [9001, 9002, 9003]);
    // The log's write read the subscription before the delete commits, and waits on its row.
    await until(() => waitingOn('entregas'), 10_000, 20, 'the event log waiting on the deleted subscription');
    await admin.query('commit');

    await untilLogged(401, id);
    const { rows } = await admin.query<{ suscripcion_id: number }>(
      'select suscripcion_id from subscriptions.entregas where evento_id = $1',
      [id],
    );
    expect(rows.map((r) => r.suscripcion_id)).toEqual([kept.id]);
    await until(() => receiver.received.some((r) => r.body.includes(id)), 10_000, 50, 'the event delivered to the subscription left');
  });

  it('logs the events written with one the database refuses, and terminates only that one', async () => {
    // The writer is held on the table it receives into, so the events that follow queue up for one transaction.
    const lock = new pg.Client({ connectionString: h.iso.databaseUrl });
    lock.on('error', () => undefined);
    await lock.connect();
    h.onClose(() => lock.end());
    await lock.query('begin');
    await lock.query('lock table subscriptions.eventos_recibidos in share mode');
    const first = await publish('events.sales.sale.created', {
      empresa_id: 402,
      id_venta: 1,
      clave_reserva: null,
      venta: { id: 1, version: 1 },
    });
    await until(() => waitingOn('eventos_recibidos'), 10_000, 20, 'the event log waiting on its table');
    // A company id past the log's integer column: no retry can ever write it.
    const refused = await publish('events.sales.sale.created', {
      empresa_id: 3_000_000_000,
      id_venta: 2,
      clave_reserva: null,
      venta: { id: 2, version: 1 },
    });
    const pkg = await imported(402, [9101, 9102, 9103]);
    const jsm = await jetstreamManager(h.bus.nc);
    await until(
      async () => (await jsm.consumers.info(streamName(h.iso.subjectPrefix), EVENT_LOG_CONSUMER)).num_ack_pending === 3,
      10_000,
      20,
      'the three events in the consumer’s hands',
    );
    await lock.query('commit');

    await untilLogged(402, pkg);
    expect(await feed(402)).toEqual([first, pkg]);
    const { rows } = await admin.query<{ n: number }>('select count(*)::int as n from subscriptions.eventos where id = $1', [refused]);
    expect(rows[0]!.n).toBe(0);
    // The refused one was settled (terminated), not left to come back forever.
    await until(
      async () => (await jsm.consumers.info(streamName(h.iso.subjectPrefix), EVENT_LOG_CONSUMER)).num_ack_pending === 0,
      10_000,
      50,
      'every event settled',
    );
  });

  it('logs and delivers a resource’s events in stream order when the first one’s write fails and the next one’s does not', async () => {
    const receiver = await startReceiver(h);
    await subscribe(h.bus, 404, receiver.url);
    const created = randomUUID();
    const createdId = partnerEventId(created, 0);
    // The first three writes of the sale's creation fail (a fault of the database, retried): the
    // update, published right after it, is handled while the creation waits its retry.
    await admin.query(`
      create sequence subscriptions.fallos_creacion;
      create function subscriptions.fallar_creacion() returns trigger language plpgsql as $$
      begin
        if new.id = '${createdId}' and nextval('subscriptions.fallos_creacion') <= 3 then
          raise exception 'write of % failed', new.id;
        end if;
        return new;
      end $$;
      create trigger fallar_creacion before insert on subscriptions.eventos_recibidos
        for each row execute function subscriptions.fallar_creacion();`);
    await publishEvent(
      h.bus,
      'events.sales.sale.created',
      { empresa_id: 404, id_venta: 7, clave_reserva: null, venta: { id: 7, version: 1 } },
      { msgId: created },
    );
    const updated = await publish('events.sales.sale.updated', { empresa_id: 404, id_venta: 7, venta: { id: 7, version: 2 } });
    // The update is received while the creation waits: held out of the log, and counted as owed.
    await until(
      async () => (await admin.query('select 1 from subscriptions.eventos_recibidos where id = $1', [updated])).rowCount === 1,
      10_000,
      5,
      'the update received',
    );
    expect(await feed(404)).toEqual([]);
    expect((await entregaBacklog(h.db as Kysely<SubscriptionsDb>)).oldestAgeSeconds).toBeGreaterThan(0);

    await untilLogged(404, updated);
    await untilLogged(404, createdId);
    expect(await feed(404)).toEqual([createdId, updated]);
    // The creation's first writes did fail: it was written on the fourth.
    const { rows } = await admin.query<{ n: string }>('select last_value as n from subscriptions.fallos_creacion');
    expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(4);
    await until(() => receiver.delivered().length >= 2, 10_000, 50, 'both events delivered');
    expect(receiver.delivered().map((e) => e.id)).toEqual([createdId, updated]);
  });

  it('ends a delivery event an older release left on the events stream as one without a contract, and logs those after it', async () => {
    // Before the intake stream, a shop's delivery was handed over as events.webhooks.delivery.received.
    const stranded = await publish('events.webhooks.delivery.received', { id_entrega: 41, empresa_id: 405 });
    const pkg = await imported(405, [9301, 9302, 9303]);
    await untilLogged(405, pkg);
    expect(await feed(405)).toEqual([pkg]);
    const { rows } = await admin.query<{ n: number }>('select count(*)::int as n from subscriptions.eventos_recibidos where id = $1', [
      stranded,
    ]);
    expect(rows[0]!.n).toBe(0);
    // Terminated, not left pending: the log's acknowledgement floor passes both.
    const jsm = await jetstreamManager(h.bus.nc);
    await until(
      async () => {
        const info = await jsm.consumers.info(streamName(h.iso.subjectPrefix), EVENT_LOG_CONSUMER);
        return info.num_ack_pending === 0 && info.num_pending === 0;
      },
      10_000,
      50,
      'the stranded delivery event settled',
    );
  });

  it('logs an event that came while its database refused connections within seconds of its return', async () => {
    // The database refuses every connection and ends the ones it has, as a Postgres restart does.
    const server = new pg.Client({ connectionString: configuredUrls().databaseUrl });
    await server.connect();
    h.onClose(() => server.end());
    const database = new URL(h.iso.databaseUrl).pathname.slice(1);
    const refuse = async (refused: boolean) => {
      await server.query(`alter database "${database}" allow_connections ${refused ? 'false' : 'true'}`);
      if (refused) await server.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database]);
    };
    await refuse(true);
    let back: number;
    try {
      const id = await imported(403, [9201, 9202, 9203]);
      // Eight seconds away: the default schedule's fourth and fifth attempts come at 6.25 s and 21.25 s.
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      await refuse(false);
      back = Date.now();
      await untilLogged(403, id, 20_000);
    } finally {
      await refuse(false);
    }
    expect(Date.now() - back).toBeLessThan(6_000);
  }, 60_000);
});
