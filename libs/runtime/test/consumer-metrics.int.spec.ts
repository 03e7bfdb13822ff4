import { jetstream } from '@nats-io/jetstream';
import type { Registry } from 'prom-client';
import { createOutboxTables, ensureConsumer, ensureEventStream, publishEvent } from '@erp/bus';
import { streamName } from '@erp/contracts';
import type { Migrations } from '@erp/db';
import { harness, type Harness } from '@erp/testing';
import { BaseConfig, createMetrics, jetStreamConsumerStates, loadConfig, registerConsumerMetrics } from '../src';

const DURABLE = 'consumer-metrics-probe';
const SUBJECT = 'events.probe.thing.happened';
const INTAKE_DURABLE = 'consumer-metrics-intake-probe';
const INTAKE_SUBJECT = 'intake.probe.thing.received';

/** Every sample of `name` (a scrape), keyed by its consumer. */
const scrape = async (registry: Registry, name: string) => {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels.consumer), v.value]));
};

describe("durable consumers' lag from JetStream", () => {
  let h: Harness<unknown>;
  beforeAll(async () => {
    h = await harness('consumer-metrics');
    await ensureEventStream(h.bus);
    await ensureEventStream(h.bus, 'intake');
    await ensureConsumer(h.bus, DURABLE, [SUBJECT]);
    await ensureConsumer(h.bus, INTAKE_DURABLE, [INTAKE_SUBJECT]);
  });
  afterAll(() => h?.close());

  it('counts the events waiting for a consumer and times its oldest unsettled one, which grows while nothing is delivered', async () => {
    let clock = 1_000_000;
    const { registry } = createMetrics('inventory');
    registerConsumerMetrics(registry, jetStreamConsumerStates(h.bus, { [DURABLE]: SUBJECT, 'no-such-consumer': SUBJECT }), () => clock);
    const read = async () => ({
      pending: await scrape(registry, 'erp_consumer_pending_messages'),
      age: await scrape(registry, 'erp_consumer_oldest_pending_age_seconds'),
    });
    expect(await read()).toEqual({ pending: { [DURABLE]: 0 }, age: { [DURABLE]: 0 } });

    for (let i = 0; i < 3; i++) await publishEvent(h.bus, SUBJECT, { i }, { msgId: `probe-${i}` });
    expect(await read()).toEqual({ pending: { [DURABLE]: 3 }, age: { [DURABLE]: 0 } });
    // Stalled: nothing delivered, nothing settled (the redelivery ratio is 0/0), the wait grows.
    clock += 90_000;
    expect(await read()).toEqual({ pending: { [DURABLE]: 3 }, age: { [DURABLE]: 90 } });

    // The oldest settled: the next one is timed from now.
    const consumer = await jetstream(h.bus.nc).consumers.get(streamName(h.iso.subjectPrefix), DURABLE);
    const first = await consumer.next({ expires: 5_000 });
    await first!.ackAck();
    clock += 10_000;
    expect(await read()).toEqual({ pending: { [DURABLE]: 2 }, age: { [DURABLE]: 0 } });
    clock += 30_000;
    expect(await read()).toEqual({ pending: { [DURABLE]: 2 }, age: { [DURABLE]: 30 } });

    // Delivered and not settled still waits.
    const second = await consumer.next({ expires: 5_000 });
    clock += 30_000;
    expect(await read()).toEqual({ pending: { [DURABLE]: 2 }, age: { [DURABLE]: 60 } });
    await second!.ackAck();
    await (await consumer.next({ expires: 5_000 }))!.ackAck();
    clock += 30_000;
    expect(await read()).toEqual({ pending: { [DURABLE]: 0 }, age: { [DURABLE]: 0 } });
  });

  it('reads each consumer on the stream that carries its event', async () => {
    const { registry } = createMetrics('webhook-ingest');
    registerConsumerMetrics(registry, jetStreamConsumerStates(h.bus, { [INTAKE_DURABLE]: INTAKE_SUBJECT }));
    for (let i = 0; i < 2; i++) await publishEvent(h.bus, INTAKE_SUBJECT, { i }, { msgId: `intake-probe-${i}` });
    expect(await scrape(registry, 'erp_consumer_pending_messages')).toEqual({ [INTAKE_DURABLE]: 2 });
  });

  it("is served on a service's /metrics for each durable consumer of its identity", async () => {
    const migrations: Migrations = { '0001': { up: (db) => createOutboxTables(db) } };
    const service = await h.start((env) => ({
      name: 'inventory',
      schema: 'consumer_metrics',
      migrations,
      config: loadConfig(BaseConfig, env),
      setup: async () => undefined,
    }));
    const text = await (await fetch(`http://127.0.0.1:${service.opsPort}/metrics`)).text();
    expect(text).toMatch(/^erp_consumer_pending_messages\{consumer="inventory-sale-created",service="inventory"\} 0$/m);
    expect(text).toMatch(/^erp_consumer_oldest_pending_age_seconds\{consumer="inventory-sale-created",service="inventory"\} 0$/m);
    await service.stop();
  });
});
