import type { SeedOutput, WebhookToken } from '@erp/back-office';
import { gatewaySubjects, webhookSubjects, type ServiceName } from '@erp/contracts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { spawnService, type ServiceProcess } from '../support/processes';
import { Stack, stackEnv } from '../support/stack';
import { deliver, webhookStore } from '../support/webhook-fixture';
import { wooHeaders, wooOrder } from '../../services/webhook-ingest/test/platform.factories';

const KEY = 'test_key_telemetry_5b0e8d2c4a6f1e3d';
const UNKNOWN_KEY = 'test_key_nobody_has_this_9f8e7d6c5b4a';
const SECRET = 'wc_secret_telemetry_2d4f6a8c0e1b3d5f';
const UNKNOWN_TOKEN = 'wh_no_such_token_telemetry_0a1b2c3d4e5f';

/** An OTLP receiver that keeps every export it gets, whole, as text. */
async function startReceiver(): Promise<OtlpReceiver & { exports: string[] }> {
  const exports: string[] = [];
  return { ...(await startOtlpReceiver((_path, body) => exports.push(body))), exports };
}

function fixture(): unknown {
  return webhookStore({
    nombre: 'Tienda Telemetría S.A.',
    key: KEY,
    vender_sin_stock: true,
    productos: [
      {
        ref: 'taza',
        nombre: 'Taza',
        codigo: 'SKU-TAZA',
        tipo: 'Producto',
        precio: 10,
        enable: 1,
        inventarios: [{ bodega: 'principal', stock: 5 }],
      },
    ],
    integraciones: [{ ref: 'woo', plataforma: 'woocommerce', secreto: SECRET }],
  });
}

/** The spans, log lines and metric labels a process left behind, as one searchable text per source. */
interface Evidence {
  source: string;
  text: string;
}

describe('secrets in telemetry', () => {
  // The processes a token, a key or a secret passes through export telemetry; sales and inventory run in this process.
  const services: ServiceName[] = ['gateway', 'webhook-ingest'];
  let stack: Stack;
  let seeded: SeedOutput;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const processes = new Map<ServiceName, ServiceProcess>();

  beforeAll(async () => {
    stack = await Stack.start({ services: [...services, 'inventory', 'sales'], contract: false });
    seeded = await stack.seed(fixture());
    for (const name of services) await stack.stopService(name);
    receiver = await startReceiver();
    const telemetry = {
      OTEL_SDK_DISABLED: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    // Processes with telemetry on, started beside other suites, may take most of spawnService's 90 s.
    const started = await Promise.all(
      services.map((name) => spawnService(name, stackEnv(stack.iso, { ...telemetry, OTEL_SERVICE_NAME: name, PORT: '0' }))),
    );
    services.forEach((name, i) => processes.set(name, started[i]!));
  }, 150_000);
  afterAll(async () => {
    await Promise.all([...processes.values()].map((p) => p.stop()));
    await receiver?.close();
    await stack.stop();
  });

  it('exports no API key, webhook token or signing secret in a span, a log line or a metric label', async () => {
    const gateway = processes.get('gateway')!;
    const base = `http://127.0.0.1:${gateway.port}`;
    const integracion = (seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>).woo!;
    const empresaId = seeded.empresas.tienda!.id as number;

    // Secrets minted while the services export: a new API key and a rotated token travel in NATS replies.
    const minted = await stack.admin.request(
      gatewaySubjects,
      'gateway.admin.apikey.create',
      { empresa_id: empresaId },
      { requestId: 'telemetry-key' },
    );
    const rotated = await stack.admin.request(
      webhookSubjects,
      'webhooks.admin.integration.rotate-token',
      { id: integracion.id },
      { requestId: 'telemetry-token' },
    );

    for (const key of [KEY, minted.key, UNKNOWN_KEY]) {
      const res = await fetch(`${base}/api/external/v1/inventory?page=1`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(key === UNKNOWN_KEY ? 401 : 200);
    }
    const body = JSON.stringify(
      wooOrder({ id: 7301, status: 'processing', line_items: [{ product_id: 41, sku: 'SKU-TAZA', quantity: 1, total: '10.00' }] }),
    );
    const accepted = await deliver(base, rotated.path, body, wooHeaders(body, 'order.created', SECRET));
    expect(accepted.status).toBe(200);
    // The token the rotation retired, a token nobody has, and a path below a token that matches no route.
    expect((await deliver(base, integracion.path, body, wooHeaders(body, 'order.created', SECRET))).status).toBe(401);
    expect((await deliver(base, `/api/webhook/woocommerce/${UNKNOWN_TOKEN}`, body, wooHeaders(body, 'order.created', SECRET))).status).toBe(
      401,
    );
    expect((await deliver(base, `${rotated.path}/extra`, body, wooHeaders(body, 'order.created', SECRET))).status).toBe(404);

    // The order becomes a sale: webhook-ingest processed it while exporting.
    const until = Date.now() + 30_000;
    while ((await stack.query(`select 1 from webhook_ingest.entregas where estado = 'procesada'`)).length === 0) {
      if (Date.now() > until)
        throw new Error(
          `the delivery was not processed: ${JSON.stringify(await stack.query('select estado, motivo from webhook_ingest.entregas'))}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
    const metrics: Evidence[] = [];
    for (const [name, p] of processes)
      metrics.push({ source: `${name} /metrics`, text: await (await fetch(`http://127.0.0.1:${p.opsPort}/metrics`)).text() });
    // Stopping flushes every span still buffered.
    await Promise.all([...processes.values()].map((p) => p.stop()));

    const spans = receiver.exports.join('\n');
    expect(spans).toContain('/api/webhook/woocommerce/:token');
    expect(spans).toContain('webhooks.receive process');
    const evidence: Evidence[] = [
      { source: 'OTLP exports', text: spans },
      ...[...processes].map(([name, p]) => ({ source: `${name} log`, text: p.output.join('\n') })),
      ...metrics,
    ];
    const secrets = {
      KEY,
      mintedKey: minted.key,
      UNKNOWN_KEY,
      SECRET,
      oldToken: integracion.token,
      rotatedToken: rotated.token,
      UNKNOWN_TOKEN,
    };
    const leaks = evidence.flatMap(({ source, text }) =>
      Object.entries(secrets)
        .filter(([, secret]) => text.includes(secret))
        .map(([name]) => `${name} in ${source}`),
    );
    expect(leaks).toEqual([]);
  });
});
