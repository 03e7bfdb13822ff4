import type { Registry } from 'prom-client';
import { API_VERSION } from '@erp/contracts';
import { createMetrics, registerOutboxMetrics, registerOutcomeCounter, registerPoolMetrics, registerSnapshotGauges } from './metrics';

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

  it('says which build runs', async () => {
    const { registry } = createMetrics('sales');
    expect(await valueOf(registry, 'erp_build_info', { service: 'sales', version: API_VERSION, node_version: process.versions.node })).toBe(
      1,
    );
  });

  it('reports a labelled snapshot gauge per label value of the last reading, dropping values no longer read', async () => {
    const { registry } = createMetrics('subscriptions');
    let reading: Record<string, number> = { enabled: 3, disabled: 1 };
    registerSnapshotGauges(registry, { subs: { name: 'erp_test_subscriptions', help: 'test', label: 'state' } }, async () => ({
      subs: reading,
    }));
    expect(await valueOf(registry, 'erp_test_subscriptions', { state: 'disabled' })).toBe(1);
    reading = { enabled: 4 };
    expect(await valueOf(registry, 'erp_test_subscriptions', { state: 'enabled' })).toBe(4);
    expect(await valueOf(registry, 'erp_test_subscriptions', { state: 'disabled' })).toBeUndefined();
  });

  it('exposes every outcome of a counter at 0 before the first, so increase() sees the first one', async () => {
    const { registry } = createMetrics('webhook-ingest');
    const count = registerOutcomeCounter(registry, {
      name: 'erp_test_outcomes_total',
      help: 'test',
      label: 'outcome',
      outcomes: ['ok', 'failed'],
    });
    expect(await valueOf(registry, 'erp_test_outcomes_total', { outcome: 'failed' })).toBe(0);
    count('failed');
    count('failed');
    expect(await valueOf(registry, 'erp_test_outcomes_total', { outcome: 'failed' })).toBe(2);
    expect(await valueOf(registry, 'erp_test_outcomes_total', { outcome: 'ok' })).toBe(0);
  });

  it("reads the pool's connections in use, idle and waiting at each scrape", async () => {
    const { registry } = createMetrics('sales');
    const pool = { totalCount: 10, idleCount: 0, waitingCount: 7 };
    registerPoolMetrics(registry, pool, 10);
    expect(await valueOf(registry, 'erp_db_pool_connections', { state: 'in_use' })).toBe(10);
    expect(await valueOf(registry, 'erp_db_pool_waiting_clients')).toBe(7);
    expect(await valueOf(registry, 'erp_db_pool_max_connections')).toBe(10);
    Object.assign(pool, { totalCount: 4, idleCount: 3, waitingCount: 0 });
    expect(await valueOf(registry, 'erp_db_pool_connections', { state: 'in_use' })).toBe(1);
    expect(await valueOf(registry, 'erp_db_pool_connections', { state: 'idle' })).toBe(3);
    expect(await valueOf(registry, 'erp_db_pool_waiting_clients')).toBe(0);
  });
});
