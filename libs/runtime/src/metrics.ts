import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BusObserver } from '@erp/bus';

/** One Prometheus registry per service, with process metrics and the bus timings. */
export function createMetrics(service: string): { registry: Registry; busObserver: BusObserver } {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const requested = new Histogram({
    name: 'erp_bus_request_duration_seconds',
    help: 'Requests this process sent over NATS, by subject and outcome code',
    labelNames: ['subject', 'code'],
    buckets,
    registers: [registry],
  });
  const handled = new Histogram({
    name: 'erp_bus_handler_duration_seconds',
    help: 'Requests this process handled from NATS, by subject and outcome code',
    labelNames: ['subject', 'code'],
    buckets,
    registers: [registry],
  });
  const consumed = new Counter({
    name: 'erp_consumer_messages_total',
    help: 'JetStream messages settled by durable consumers, by outcome (ack, nak = retry later, term = given up)',
    labelNames: ['consumer', 'subject', 'outcome'],
    registers: [registry],
  });
  const redelivered = new Counter({
    name: 'erp_consumer_redeliveries_total',
    help: 'JetStream messages handled again after an earlier delivery failed or timed out',
    labelNames: ['consumer', 'subject'],
    registers: [registry],
  });
  return {
    registry,
    busObserver: {
      requested: (subject, code, seconds) => requested.observe({ subject, code }, seconds),
      handled: (subject, code, seconds) => handled.observe({ subject, code }, seconds),
      consumed: (consumer, subject, outcome, deliveryCount) => {
        consumed.inc({ consumer, subject, outcome });
        if (deliveryCount > 1) redelivered.inc({ consumer, subject });
      },
    },
  };
}

/** Outbox backlog gauges, read from the service's own outbox when Prometheus scrapes. */
export function registerOutboxMetrics(registry: Registry, backlog: () => Promise<{ pending: number; oldestAgeSeconds: number }>): void {
  let last = { pending: 0, oldestAgeSeconds: 0 };
  // Both gauges are collected at once on a scrape: they share one read, so they describe the same moment.
  let reading: Promise<void> | undefined;
  const refresh = () =>
    (reading ??= backlog()
      .then(
        (read) => void (last = read),
        () => undefined,
      )
      .finally(() => (reading = undefined)));
  new Gauge({
    name: 'erp_outbox_pending_events',
    help: 'Events committed to the outbox and not yet published to JetStream',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(last.pending);
    },
  });
  new Gauge({
    name: 'erp_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest unpublished outbox event (0 when none)',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(last.oldestAgeSeconds);
    },
  });
}
