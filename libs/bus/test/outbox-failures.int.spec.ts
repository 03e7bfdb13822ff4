import type { NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';
import { defineEvents } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { startOutboxRelay, type Worker } from '@erp/runtime';
import { harness, until, type Harness } from '@erp/testing';
import {
  addOutboxOrder,
  createOutboxTables,
  enqueueEvent,
  ensureConsumer,
  ensureEventStream,
  startConsumer,
  type Bus,
  type EventMeta,
} from '../src';

const events = defineEvents({
  'events.test.thing.happened': { payload: z.object({ n: z.number().int() }) },
});

/**
 * The relay between an outbox row and JetStream when a fault falls between publishing and marking
 * the row: Postgres goes (the relay's transaction is ended by the server after the publish), or the
 * publish fails after JetStream stored the event (its acknowledgement lost). Either way the row is
 * published again, and the stream's deduplication on the row id delivers the event once.
 */
describe('the outbox relay across a fault between publish and mark', () => {
  let h: Harness<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const delivered: Array<{ n: number; meta: EventMeta }> = [];
  /** What the relay's next publish meets once JetStream has answered it. */
  let afterPublish: (() => Promise<void>) | undefined;
  let publishes = 0;
  let relay: Worker;

  /** The bus as the relay sees it: every JetStream publish goes through, then meets `afterPublish`. */
  const faultyBus = (bus: Bus): Bus => {
    const nc = new Proxy(bus.nc, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (key === 'request')
          return async (...args: Parameters<NatsConnection['request']>) => {
            const reply = await target.request(...args);
            publishes++;
            const fault = afterPublish;
            afterPublish = undefined;
            if (fault) await fault();
            return reply;
          };
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return new Proxy(bus, {
      get(target, key) {
        if (key === 'nc') return nc;
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };

  beforeAll(async () => {
    h = await harness('outbox-failures', {
      schema: 'svc',
      migrations: { '0001': { up: (m) => createOutboxTables(m) }, '0002': { up: (m) => addOutboxOrder(m) } },
    });
    await ensureEventStream(h.bus);
    await ensureConsumer(h.bus, 'relay-spec', ['events.test.thing.happened']);
    await startConsumer(h.bus, {
      durable: 'relay-spec',
      events,
      subjects: ['events.test.thing.happened'],
      handler: async (_subject, { n }, meta) => void delivered.push({ n, meta }),
    });
    relay = startOutboxRelay({ db: h.openDb({ max: 2 }), bus: faultyBus(h.bus), pollMs: 50 });
    h.onClose(() => relay.stop());
  });
  afterAll(() => h?.close());

  const enqueue = (n: number) => inTransaction(h.db, (trx) => enqueueEvent(trx, events, 'events.test.thing.happened', { n }));
  const unpublished = async () => (await h.db.selectFrom('outbox').select('id').where('published_at', 'is', null).execute()).length;

  it('delivers once an event published by a transaction that Postgres ended before it marked the row', async () => {
    afterPublish = async () => {
      // Postgres ends the relay's transaction (idle in it while JetStream answered), as a restart does.
      await h.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and state = 'idle in transaction'`,
      );
    };
    const before = publishes;
    const id = await enqueue(1);
    await until(async () => (await unpublished()) === 0, 10_000, 25, 'the row marked published');
    expect(publishes - before).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(delivered.filter((d) => d.n === 1).map((d) => [d.meta.eventId, d.meta.deliveryCount])).toEqual([[id, 1]]);
  });

  it('delivers once an event whose publish failed after JetStream stored it', async () => {
    afterPublish = async () => {
      throw new Error('the acknowledgement was lost');
    };
    const before = publishes;
    const id = await enqueue(2);
    await until(async () => (await unpublished()) === 0, 10_000, 25, 'the row marked published');
    expect(publishes - before).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(delivered.filter((d) => d.n === 2).map((d) => [d.meta.eventId, d.meta.deliveryCount])).toEqual([[id, 1]]);
  });
});
