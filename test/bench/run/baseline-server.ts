import http from 'node:http';
import { Kysely, PostgresDialect } from 'kysely';
import { JsonText } from '@erp/bus';
import { createPool } from '@erp/db';
import type { InventoryDb } from '../../../services/inventory/src/db/tables';
import type { ReturnsDb } from '../../../services/returns/src/db/tables';
import type { SalesDb } from '../../../services/sales/src/db/tables';
import type { GatewayDb } from '../../../services/gateway/src/db/tables';
import type { WebhookDb } from '../../../services/webhook-ingest/src/db/tables';
import { directQueries, runDirect } from './direct-queries';
import { webhookRoutes } from './webhook-baseline';
import { writeRoutes } from './write-baseline';

/**
 * The baseline of every read scenario: node:http and one pg pool running the services' own
 * repository functions (so the very same SQL, statement for statement) for one company, with no
 * gateway, API key, quota, NATS hop, validation of replies or logging in between. It is the line
 * the microservice path is compared to. Writes (POST and PUT) go to the write baseline
 * (write-baseline.ts), webhook deliveries to theirs (webhook-baseline.ts). Started by the harness
 * as its own process.
 */
const port = Number(process.env.BASELINE_PORT ?? 0);
const empresaId = Number(process.env.BASELINE_EMPRESA_ID);
const pool = createPool({
  connectionString: process.env.DATABASE_URL!,
  max: Number(process.env.DB_POOL_MAX ?? 10),
  applicationName: 'bench-baseline',
});
// Schema-qualified as the services' own instances are (createService: `withSchema`).
const inventory = new Kysely<InventoryDb>({ dialect: new PostgresDialect({ pool }) }).withSchema('inventory');
const sales = new Kysely<SalesDb>({ dialect: new PostgresDialect({ pool }) }).withSchema('sales');
const returns = new Kysely<ReturnsDb>({ dialect: new PostgresDialect({ pool }) }).withSchema('returns');
const routes = directQueries({ inventory, sales, returns }, empresaId);
const writesReady = Promise.all([
  writeRoutes(
    { gateway: new Kysely<GatewayDb>({ dialect: new PostgresDialect({ pool }) }).withSchema('gateway'), inventory, sales },
    { id: empresaId, clave: 'bench-grande' },
  ),
  webhookRoutes(new Kysely<WebhookDb>({ dialect: new PostgresDialect({ pool }) }).withSchema('webhook_ingest')),
]);

/** The body: JSON text the services pass on is written as it is, as the gateway writes it. */
function body(data: unknown): string {
  if (data instanceof JsonText) return `{"success":true,"data":${data.text}}`;
  if (data !== null && typeof data === 'object' && 'items' in data && data.items instanceof JsonText) {
    const { items, ...rest } = data;
    return `{"success":true,"data":${items.text},"pagination":${JSON.stringify(rest)}}`;
  }
  return JSON.stringify({ success: data !== undefined, data });
}

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') return void res.end('ok');
  if (req.method === 'POST' || req.method === 'PUT') return void serveWrite(req, res);
  const pending = runDirect(routes, req.url ?? '/');
  if (!pending) return void res.writeHead(404).end();
  pending
    .then((data) => {
      res.writeHead(data === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(body(data));
    })
    .catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, error: String(err) }));
    });
});

/** A write scenario's request, through the same flows as the services (see write-baseline.ts). */
function serveWrite(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const [writes, webhooks] = routesOf!;
    const pending =
      webhooks(req.url ?? '/', req.headers as Record<string, string>, body) ?? writes(req.method!, req.url ?? '/', body.toString('utf8'));
    if (!pending) return void res.writeHead(404).end();
    pending
      .then(({ status, data }) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: status < 300, data }));
      })
      .catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, error: String(err) }));
      });
  });
}

server.keepAliveTimeout = 65_000;
let routesOf: Awaited<typeof writesReady> | undefined;
void writesReady.then((routes) => {
  routesOf = routes;
  server.listen(port, '127.0.0.1', () => {
    const address = server.address();
    console.log(JSON.stringify({ msg: 'baseline listening', port: typeof address === 'object' && address ? address.port : port }));
  });
});

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.end().then(() => process.exit(0));
});
