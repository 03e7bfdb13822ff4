import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { spawnService, type ServiceProcess } from '../support/processes';
import { KEY_A, Stack, stackEnv, twoCompanies } from '../support/stack';
import type { SeedOutput } from '@erp/back-office';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
}

/** Spans exported to an in-memory OTLP receiver, each with its service. */
async function startReceiver(): Promise<OtlpReceiver & { spans: Span[] }> {
  const spans: Span[] = [];
  const receiver = await startOtlpReceiver((path, body) => {
    if (path !== '/v1/traces') return;
    const payload = JSON.parse(body) as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
        scopeSpans: Array<{ spans: Array<Omit<Span, 'service'>> }>;
      }>;
    };
    for (const rs of payload.resourceSpans) {
      const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
      for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
    }
  });
  return { ...receiver, spans };
}

describe('traces and metrics of the running processes', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let gateway: ServiceProcess;
  let inventory: ServiceProcess;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory'] });
    seeded = await stack.seed(twoCompanies());
    await stack.stopService('gateway');
    await stack.stopService('inventory');
    receiver = await startReceiver();
    const telemetry = {
      OTEL_SDK_DISABLED: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    // Two processes with telemetry on, started beside other suites, may take most of spawnService's 90 s.
    [gateway, inventory] = await Promise.all([
      spawnService('gateway', stackEnv(stack.iso, { ...telemetry, OTEL_SERVICE_NAME: 'gateway', PORT: '0' })),
      spawnService('inventory', stackEnv(stack.iso, { ...telemetry, OTEL_SERVICE_NAME: 'inventory' })),
    ]);
  }, 150_000);
  afterAll(async () => {
    await Promise.all([gateway?.stop(), inventory?.stop()]);
    await receiver?.close();
    await stack.stop();
  });

  it('follows one request in one trace: HTTP at the gateway, the NATS request, the service handler and its SQL', async () => {
    const id = (seeded.empresas.a!.productos as Record<string, number>).laptop;
    const res = await fetch(`http://127.0.0.1:${gateway.port}/api/external/v1/inventory/${id}`, {
      headers: { Authorization: `Bearer ${KEY_A}` },
    });
    expect(res.status).toBe(200);

    const deadline = Date.now() + 10_000;
    let trace: Span[];
    for (;;) {
      const natsServer = receiver.spans.find((s) => s.name === 'inventory.product.get process');
      trace = natsServer ? receiver.spans.filter((s) => s.traceId === natsServer.traceId) : [];
      if (
        trace.some((s) => s.service === 'inventory' && /select/i.test(s.name)) &&
        trace.some((s) => s.kind === 2 && s.service === 'gateway')
      )
        break;
      if (Date.now() > deadline) throw new Error(`incomplete trace: ${JSON.stringify(trace.map((s) => [s.service, s.name]))}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const httpServer = trace.find((s) => s.service === 'gateway' && s.kind === 2)!; // SERVER
    const natsClient = trace.find((s) => s.name === 'inventory.product.get request')!;
    const natsServer = trace.find((s) => s.name === 'inventory.product.get process')!;
    const sqlSpan = trace.find((s) => s.service === 'inventory' && /select/i.test(s.name))!;
    expect(natsClient.service).toBe('gateway');
    expect(natsServer.parentSpanId).toBe(natsClient.spanId);
    // The SQL span descends from the handler's span, which descends from the gateway's HTTP span.
    const ancestors = (span: Span): string[] => {
      const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
      return parent ? [parent.spanId, ...ancestors(parent)] : [];
    };
    expect(ancestors(sqlSpan)).toContain(natsServer.spanId);
    expect(ancestors(natsClient)).toContain(httpServer.spanId);
  });

  it('exposes HTTP, NATS, quota and outbox metrics for Prometheus', async () => {
    await fetch(`http://127.0.0.1:${gateway.port}/api/external/v1/inventory/1`, { headers: { Authorization: `Bearer ${KEY_A}` } });
    const gatewayMetrics = await (await fetch(`http://127.0.0.1:${gateway.opsPort}/metrics`)).text();
    expect(gatewayMetrics).toMatch(/erp_http_request_duration_seconds_count\{[^}]*route="\/inventory\/:id"[^}]*status="200"/);
    expect(gatewayMetrics).toMatch(/erp_bus_request_duration_seconds_count\{[^}]*subject="inventory.product.get",code="OK"/);
    expect(gatewayMetrics).toMatch(/erp_gateway_rate_limit_decisions_total\{[^}]*result="allowed",limit_type="standard"[^}]*\} [1-9]/);
    expect(gatewayMetrics).toMatch(/erp_outbox_pending_events\{[^}]*\} 0/);
    expect(gatewayMetrics).toMatch(/erp_outbox_oldest_pending_age_seconds/);
    const inventoryMetrics = await (await fetch(`http://127.0.0.1:${inventory.opsPort}/metrics`)).text();
    expect(inventoryMetrics).toMatch(/erp_bus_handler_duration_seconds_count\{[^}]*subject="inventory.product.get",code="OK"/);
    expect(inventoryMetrics).toMatch(/process_resident_memory_bytes/);
  });
});
