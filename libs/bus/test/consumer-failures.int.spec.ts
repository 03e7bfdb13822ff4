import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { jetstreamManager } from '@nats-io/jetstream';
import { defineEvents, streamName } from '@erp/contracts';
import { harness, until, type Harness } from '@erp/testing';
import { PoisonEventError, ensureConsumer, ensureEventStream, publishEvent, startConsumer, type Bus } from '../src';

const events = defineEvents({
  'events.test.thing.happened': { payload: z.object({ n: z.number().int() }) },
});

/**
 * A durable consumer whose handler loses Postgres for longer than its attempts: the event must be
 * applied when Postgres answers again, not terminated (a terminated event is lost: an acknowledged
 * write whose partner event never reaches the log, a stock movement never applied).
 */
describe('a consumer whose handler keeps failing for a transient reason', () => {
  let h: Harness<unknown>;
  let bus: Bus;
  const outcomes: Array<{ n: number; outcome: string; delivery: number }> = [];
  const applied = new Map<number, number>();
  /** Deliveries of each event that lose their Postgres connection before it comes back. */
  const failuresOf = new Map<number, number>();
  let lastEvent = 0;

  beforeAll(async () => {
    h = await harness('consumer-failures');
    bus = await h.connect('consumer-failures', {
      observer: {
        consumed: (_consumer, subject, outcome, delivery) => {
          if (subject === 'events.test.thing.happened') outcomes.push({ n: lastEvent, outcome, delivery });
        },
      },
    });
    await ensureEventStream(h.bus);
    await ensureConsumer(h.bus, 'failures-consumer', ['events.test.thing.happened']);
    await startConsumer(bus, {
      durable: 'failures-consumer',
      events,
      subjects: ['events.test.thing.happened'],
      backoffMs: [20],
      maxDeliver: 3,
      handler: async (_subject, { n }, meta) => {
        lastEvent = n;
        if (n < 0) throw new PoisonEventError('never valid');
        if (meta.deliveryCount <= (failuresOf.get(n) ?? 0)) {
          // The server ends this very connection, as a Postgres restart does (57P01): the pool's error, as the handler sees it.
          await h.pool.query('select pg_terminate_backend(pg_backend_pid())');
          throw new Error('the connection survived its termination');
        }
        applied.set(n, meta.deliveryCount);
      },
    });
  });
  afterAll(() => h?.close());

  it('applies an event whose first deliveries lost Postgres, past maxDeliver, instead of terminating it', async () => {
    failuresOf.set(1, 6);
    await publishEvent(h.bus, 'events.test.thing.happened', { n: 1 }, { msgId: randomUUID() });
    await until(() => applied.has(1), 10_000, 25, 'the event applied');
    expect(applied.get(1)).toBe(7);
    expect(outcomes.filter((o) => o.outcome === 'term')).toEqual([]);
  });

  it('still terminates a poison event at its first delivery', async () => {
    await publishEvent(h.bus, 'events.test.thing.happened', { n: -1 }, { msgId: randomUUID() });
    await until(() => outcomes.some((o) => o.outcome === 'term'), 5_000, 25, 'the poison terminated');
    expect(outcomes.filter((o) => o.outcome === 'term')).toEqual([{ n: -1, outcome: 'term', delivery: 1 }]);
    // Settled for good on every server: a +TERM that carries a reason is ignored before NATS 2.10.5, and the event came back after each ack wait.
    const jsm = await jetstreamManager(h.bus.nc);
    await until(
      async () => (await jsm.consumers.info(streamName(h.iso.subjectPrefix), 'failures-consumer')).num_ack_pending === 0,
      5_000,
      50,
      'nothing left pending',
    );
  });
});

/**
 * A durable under a declared name that pushes (made by whoever could create it before the
 * migration step did): its deliver subject could be any subject, so a service will not bind to it.
 */
describe('a durable that pushes instead of being pulled', () => {
  let h: Harness<unknown>;

  beforeAll(async () => {
    h = await harness('consumer-pushed');
    await ensureEventStream(h.bus);
  });
  afterAll(() => h?.close());

  it('stops the service’s start, naming where it pushes', async () => {
    const jsm = await jetstreamManager(h.bus.nc);
    await jsm.consumers.add(streamName(h.iso.subjectPrefix), {
      durable_name: 'pushed-consumer',
      filter_subject: h.bus.subject('events.test.thing.happened'),
      deliver_subject: h.bus.subject('sales.admin.annul'),
    });
    const sut = startConsumer(h.bus, {
      durable: 'pushed-consumer',
      events,
      subjects: ['events.test.thing.happened'],
      handler: async () => undefined,
    });
    await expect(sut).rejects.toThrow(`pushes to ${h.bus.subject('sales.admin.annul')}`);
  });
});
