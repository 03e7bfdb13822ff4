import type { Registry } from 'prom-client';
import { createMetrics, registerOutboxMetrics } from './metrics';

/** The value of one series (a histogram's `_count` or `_sum` included) whose labels include `labels`. */
const valueOf = async (registry: Registry, name: string, labels: Record<string, string> = {}) => {
  const samples = (await registry.getMetricsAsJSON()).flatMap((m) =>
    m.values.map((v) => ({ ...v, name: 'metricName' in v && typeof v.metricName === 'string' ? v.metricName : m.name })),
  );
  return samples.find((v) => v.name === name && Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
};

describe('service metrics', () => {
  it('labels every series with the service and counts settled messages by outcome', async () => {
    const { registry, busObserver } = createMetrics('sales');
    busObserver.consumed!('sales-events', 'events.returns.created', 'ack', 1);
    busObserver.consumed!('sales-events', 'events.returns.created', 'ack', 1);
    busObserver.consumed!('sales-events', 'events.returns.created', 'nak', 1);
    const labels = { service: 'sales', consumer: 'sales-events', subject: 'events.returns.created' };
    expect(await valueOf(registry, 'erp_consumer_messages_total', { ...labels, outcome: 'ack' })).toBe(2);
    expect(await valueOf(registry, 'erp_consumer_messages_total', { ...labels, outcome: 'nak' })).toBe(1);
  });

  it('counts a redelivery only for a message delivered before', async () => {
    const { registry, busObserver } = createMetrics('inventory');
    busObserver.consumed!('c', 'events.x', 'ack', 1);
    expect(await valueOf(registry, 'erp_consumer_redeliveries_total', { consumer: 'c' })).toBeUndefined();
    busObserver.consumed!('c', 'events.x', 'nak', 2);
    busObserver.consumed!('c', 'events.x', 'term', 3);
    expect(await valueOf(registry, 'erp_consumer_redeliveries_total', { consumer: 'c', subject: 'events.x' })).toBe(2);
  });

  it('records request and handler durations by subject and outcome code', async () => {
    const { registry, busObserver } = createMetrics('gateway');
    busObserver.requested!('sales.create', 'OK', 0.003);
    busObserver.handled!('sales.get', 'NOT_FOUND', 0.2);
    expect(await valueOf(registry, 'erp_bus_request_duration_seconds_count', { subject: 'sales.create', code: 'OK' })).toBe(1);
    expect(await valueOf(registry, 'erp_bus_handler_duration_seconds_sum', { subject: 'sales.get', code: 'NOT_FOUND' })).toBeCloseTo(0.2);
  });

  it('reads the outbox backlog once per scrape for both gauges, and keeps the last reading when the read fails', async () => {
    const { registry } = createMetrics('returns');
    let reading: { pending: number; oldestAgeSeconds: number } | Error = { pending: 4, oldestAgeSeconds: 12 };
    let reads = 0;
    registerOutboxMetrics(registry, async () => {
      reads += 1;
      if (reading instanceof Error) throw reading;
      return reading;
    });
    expect(reads).toBe(0);
    expect(await valueOf(registry, 'erp_outbox_pending_events')).toBe(4);
    expect(await valueOf(registry, 'erp_outbox_oldest_pending_age_seconds')).toBe(12);
    reading = { pending: 0, oldestAgeSeconds: 0 };
    expect(await valueOf(registry, 'erp_outbox_pending_events')).toBe(0);
    reading = new Error('db down');
    expect(await valueOf(registry, 'erp_outbox_pending_events')).toBe(0);
    reading = { pending: 9, oldestAgeSeconds: 30 };
    expect(await valueOf(registry, 'erp_outbox_oldest_pending_age_seconds')).toBe(30);
    expect(reads).toBe(5); // one read per scrape
  });
});
