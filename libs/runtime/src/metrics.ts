import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';
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
  return {
    registry,
    busObserver: {
      requested: (subject, code, seconds) => requested.observe({ subject, code }, seconds),
      handled: (subject, code, seconds) => handled.observe({ subject, code }, seconds),
    },
  };
}
