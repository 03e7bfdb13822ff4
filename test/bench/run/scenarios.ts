import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { API_BASE, WEBHOOK_BASE } from '@erp/contracts';
import { wooHeaders, wooOrder } from '../../../services/webhook-ingest/test/platform.factories';
import { benchWebhookIntegration } from '../data/loaders/webhook-ingest.loader';
import { benchApiKey } from '../data/plan';
import type { HandlerTime, LoadRequest, LoadResult } from './load';

/** What the scenarios need to know about the loaded data, read once from the bench database. */
export interface Facts {
  empresaId: number;
  apiKey: string;
  /** Live products of the large company, in a fixed random order. */
  productIds: number[];
  /** Enabled physical products, for sale lines and webhook orders (SKU = codigo, price with tax). */
  saleProducts: Array<{ id: number; codigo: string; precio: number }>;
  /** Pending sales a PUT may change (no credit limit to hit, a channel, no fiscal document, live products), with their lines. */
  pendingSales: Array<{ id: number; lineas: number[]; cantidades: number[] }>;
  /** The company's WooCommerce integration, when the bench data has one. */
  webhook?: { integracionId: number; token: string; secret: string };
  sucursalId: number;
  bodegaId: number;
  /** The branch's four document types that issue sales. */
  documentoIds: number[];
  canalId: number;
  salesCount: number;
  /** The last full month of the history. */
  month: { inicio: string; fin: string };
  today: string;
}

export async function readFacts(databaseUrl: string): Promise<Facts> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const clave = 'bench-grande';
    const empresa = await client
      .query<{ id: number }>(`select id from gateway.empresas where clave = $1`, [clave])
      .catch(() => ({ rows: [] }));
    if (empresa.rows.length === 0) throw new Error('the bench database has no bench company: run `npm run bench:data` first');
    const empresaId = empresa.rows[0]!.id;
    const ids = async (sql: string) => (await client.query<{ id: number }>(sql, [empresaId])).rows.map((r) => r.id);
    const productIds = await ids(
      `select id from inventory.productos where empresa_id = $1 and deleted_at is null order by md5(id::text) limit 2000`,
    );
    const { rows: saleProducts } = await client.query<{ id: number; codigo: string; precio: number }>(
      `select id, codigo, precio::float8 as precio from inventory.productos
        where empresa_id = $1 and deleted_at is null and enable and tipo = 'Producto' order by md5(id::text) limit 2000`,
      [empresaId],
    );
    const { rows: pendingSales } = await client.query<{ id: number; lineas: number[]; cantidades: number[] }>(
      `select v.id, array_agg(d.id order by d.linea) as lineas, array_agg(d.cantidad::float8 order by d.linea) as cantidades
         from sales.ventas v
         join sales.clientes c on c.id = v.cliente_id
         join sales.venta_detalles d on d.venta_id = v.id
        where v.empresa_id = $1 and v.estado = 'Pendiente' and c.limite_credito = 0 and v.canal_id is not null and not v.documento_fiscal_emitido
          -- An update re-checks every line's product: one disabled or deleted since the sale is refused (422).
          and not exists (select 1 from sales.venta_detalles x join inventory.productos p on p.id = x.id_producto
                           where x.venta_id = v.id and (not p.enable or p.deleted_at is not null))
        group by v.id order by md5(v.id::text) limit 5000`,
      [empresaId],
    );
    const { rows: integracion } = await client
      .query<{ id: number }>(
        `select id from webhook_ingest.integraciones where empresa_id = $1 and plataforma = 'woocommerce' and activo order by id limit 1`,
        [empresaId],
      )
      .catch(() => ({ rows: [] as Array<{ id: number }> }));
    const { rows: branch } = await client.query<{ sucursal_id: number; bodega_id: number; documentos: number[] }>(
      `select b.sucursal_id, min(b.id)::int as bodega_id,
              (select array_agg(d.id order by d.id) from sales.documentos d where d.sucursal_id = b.sucursal_id and d.activo and not d.solo_cotizacion) as documentos
         from inventory.bodegas b where b.empresa_id = $1 and b.activo group by b.sucursal_id order by b.sucursal_id limit 1`,
      [empresaId],
    );
    const { rows: canal } = await client.query<{ id: number }>(
      `select min(id)::int as id from sales.canales where empresa_id = $1 and activo`,
      [empresaId],
    );
    const { rows: sales } = await client.query<{ n: number; last: string | null }>(
      `select count(*)::int as n, max(fecha)::text as last from sales.ventas where empresa_id = $1`,
      [empresaId],
    );
    const today = new Date().toISOString().slice(0, 10);
    const last = new Date(`${sales[0]?.last ?? today}T00:00:00Z`);
    const inicio = new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth() - 1, 1));
    const fin = new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth(), 0));
    return {
      empresaId,
      apiKey: benchApiKey(clave),
      productIds,
      saleProducts,
      pendingSales,
      ...(integracion[0] ? { webhook: { integracionId: integracion[0].id, ...benchWebhookIntegration(clave) } } : {}),
      sucursalId: branch[0]!.sucursal_id,
      bodegaId: branch[0]!.bodega_id,
      documentoIds: branch[0]!.documentos ?? [],
      canalId: canal[0]!.id,
      salesCount: sales[0]?.n ?? 0,
      month: { inicio: inicio.toISOString().slice(0, 10), fin: fin.toISOString().slice(0, 10) },
      today,
    };
  } finally {
    await client.end();
  }
}

export interface ScenarioResult {
  full: LoadResult;
  baseline?: LoadResult;
  /** Largest RSS of each service during the full-path run, bytes. */
  rss: Record<string, number>;
  /**
   * CPU seconds each service used while the full path answered the requests, and, for a scenario
   * that waits for its asynchronous work (`settle`), from then until it had settled.
   */
  cpu: { answering: Record<string, number>; settling?: Record<string, number> };
  /** Mean handler time of each NATS subject during the full-path run. */
  handlers: HandlerTime[];
  /** What happened after the requests were answered (the webhook burst: deliveries processed into sales). */
  settled?: Settled;
  /** The full-path run of the scenario named by `reference`, when it was measured before this one. */
  reference?: LoadResult;
  /** Bytes of one answer by `Accept-Encoding`, for scenarios that measure them. */
  bytes?: AnswerBytes;
}

export interface AnswerBytes {
  identity: number;
  gzip: number;
  br: number;
}

export interface Settled {
  /** What `processed` counts (deliveries processed into sales unless said). */
  what?: string;
  processed: number;
  failed: number;
  /** Still waiting when the harness stopped looking. */
  pending: number;
  /** From the first delivery received to the last processed. */
  seconds: number;
  rate: number;
  /**
   * Partner events during the load: from a sale's `created_at` to its `sale.created` arriving at
   * the receiver, and the dispatcher's part of it (from the event's `timestamp`, when the event log
   * recorded it).
   */
  lagMs?: { p50: number; p99: number; max: number; dispatchP50: number; dispatchP99: number };
  /** Partner events: a backlog of the run's events queued again by a replay, drained. */
  drain?: { events: number; seconds: number; rate: number };
}

export interface Target {
  label: string;
  met(r: ScenarioResult): boolean;
}

export interface Scenario {
  name: string;
  /** Also run against the baseline with the same requests (reads: the same queries; writes: the same flows in one process). */
  baseline: boolean;
  connections?: number;
  /** The next request, path relative to the API base (and to the baseline's root), or absolute when `absolute`. */
  next(): LoadRequest;
  absolute?: boolean;
  /** A burst of this many requests instead of a timed run (no warm-up). */
  amount?: number;
  /** Waits for the asynchronous work the run started, and measures it. */
  settle?: (startedAt: Date) => Promise<Settled>;
  /**
   * Runs once before the first request, with a way to send one (e.g. to learn an ETag), and the
   * gateway's API root with the bench key's headers for calls of its own.
   */
  prepare?: (api: {
    send: (r: LoadRequest) => Promise<{ status: number; headers: Headers }>;
    apiRoot: string;
    headers: Record<string, string>;
  }) => Promise<void>;
  /** The status every request answers when all goes well; a 2xx when omitted. */
  status?: number;
  /** A scenario measured earlier whose requests/s this one is compared with (the same GET's 200 for its 304). */
  reference?: string;
  /** Also measures the bytes of one answer without compression, with gzip and with br. */
  measureBytes?: boolean;
  /** Sales each request writes, when more than one (a batch): the report gives sales/s beside req/s. */
  salesPerRequest?: number;
  targets: Target[];
}

/** A scenario of the issue that cannot be measured yet, and why. */
export interface Pending {
  name: string;
  reason: string;
  /** A request to the gateway (absolute path) that tells whether the route has landed. */
  probe: LoadRequest;
}

const MB = 1024 * 1024;
export const RSS_LIMIT = 200 * MB;

/** The results of this run's scenarios so far, by name: a target may compare with another scenario. */
export const measuredSoFar = new Map<string, ScenarioResult>();

/** Sales written per second, at least `factor` times those of the scenario `other` in the same run. */
const salesRateAtLeast = (factor: number, other: string, perRequest: number): Target => ({
  label: `≥ ${factor} × the sales/s of ${other}`,
  met: (r) => {
    const single = measuredSoFar.get(other);
    return single !== undefined && single.full.rps > 0 && r.full.rps * perRequest >= factor * single.full.rps;
  },
});

/** A run in which no request completed has no latency to compare: it misses every target. */
const p50Within = (ms: number): Target => ({ label: `p50 ≤ ${ms} ms`, met: (r) => r.full.requests > 0 && r.full.p50 <= ms });
const rateAtLeast = (rps: number): Target => ({ label: `≥ ${rps} req/s`, met: (r) => r.full.rps >= rps });
const referenceTimes = (times: number): Target => ({
  label: `≥ ${times} × the reference's req/s`,
  met: (r) => r.reference !== undefined && r.full.rps >= times * r.reference.rps,
});
const ratioAtLeast = (ratio: number): Target => ({
  label: `≥ ${Math.round(ratio * 100)} % of baseline req/s`,
  met: (r) => r.baseline !== undefined && r.full.rps >= ratio * r.baseline.rps,
});

function cycle<T>(items: readonly T[]): () => T {
  let i = 0;
  return () => items[i++ % items.length]!;
}

const get = (path: string): LoadRequest => ({ method: 'GET', path });

const SINGLE_SALES = 'POST /sales (3 lines, four document types)';
const BATCH_SIZE = 100;

/** The scenarios of issue 11 that the routes that exist today allow. */
export function scenarios(f: Facts, runTag: string, databaseUrl: string): Scenario[] {
  const product = cycle(f.productIds);
  const saleProduct = cycle(f.saleProducts.map((p) => p.id));
  const nombres = cycle(['martillo', 'cable', 'café', 'pintura', 'detergente', 'tornillo premium']);
  const lastPage = Math.max(1, Math.ceil(f.salesCount / 100));
  const deepPage = Math.min(5_000, lastPage);
  const month = `fecha_inicio=${f.month.inicio}&fecha_fin=${f.month.fin}`;
  const sale = (documento: () => number) => ({
    fecha: f.today,
    estado: 'Pagada',
    id_sucursal: f.sucursalId,
    id_bodega: f.bodegaId,
    id_documento: documento(),
    id_canal: f.canalId,
    detalles: [saleProduct(), saleProduct(), saleProduct()].map((id_producto, i) => ({ id_producto, cantidad: i + 1 })),
  });
  const saleBody = (documento: () => number) => () => ({ method: 'POST' as const, path: '/sales', body: JSON.stringify(sale(documento)) });
  // Each batch is new sales: references unique to this run.
  let batches = 0;
  const batchBody = (): LoadRequest => {
    const batch = ++batches;
    const ventas = Array.from({ length: BATCH_SIZE }, (_, i) => ({ referencia_externa: `BENCH-${runTag}-${batch}-${i}`, ...sale(spread) }));
    return { method: 'POST', path: '/sales/batch', body: JSON.stringify({ ventas }) };
  };
  let imports = 0;
  const importBody = (): LoadRequest => {
    const batch = ++imports;
    const packages = Array.from({ length: 500 }, (_, i) => ({
      cliente: `Cliente ${i}`,
      codigo_asesor: 'A003',
      wr: `BENCH-${runTag}-${batch}-${i}`,
      guia: `G${batch}${i}`,
      embalaje: 'Caja',
      piezas: 1 + (i % 5),
      peso: 1.5 + (i % 40),
      precio: 25,
      cuenta_a_terceros: 0,
      otros: 2.5,
      total: 27.5,
      id_sucursal: f.sucursalId,
    }));
    return { method: 'POST', path: '/packages/import', body: JSON.stringify({ packages }) };
  };
  // Each PUT adds one unit to the first line of a pending sale and keeps the others: stock moves by the difference.
  const pendingSale = cycle(f.pendingSales);
  const updateBody = (): LoadRequest => {
    const sale = pendingSale();
    const detalles = sale.lineas.map((id, i) => ({ id, cantidad: sale.cantidades[i]! + (i === 0 ? 1 : 0) }));
    sale.cantidades[0]! += 1;
    return { method: 'PUT', path: `/sales/${sale.id}`, body: JSON.stringify({ detalles }) };
  };
  const oneDocument = f.documentoIds[0]!;
  const spread = cycle(f.documentoIds);
  return [
    { name: 'GET /inventory/{id}', baseline: true, next: () => get(`/inventory/${product()}`), targets: [ratioAtLeast(0.75)] },
    {
      name: 'GET /inventory?nombre=…',
      baseline: true,
      next: () => get(`/inventory?nombre=${encodeURIComponent(nombres())}`),
      targets: [p50Within(30), rateAtLeast(250), ratioAtLeast(0.75)],
    },
    {
      name: 'GET /inventory/summary',
      baseline: true,
      next: () => get('/inventory/summary'),
      targets: [p50Within(100), ratioAtLeast(0.75)],
    },
    {
      name: 'GET /sales?per_page=100 (first page)',
      baseline: true,
      next: () => get('/sales?per_page=100'),
      targets: [p50Within(30), rateAtLeast(200), ratioAtLeast(0.75)],
    },
    {
      name: 'GET /sales?per_page=100 (one month, Completada)',
      baseline: true,
      next: () => get(`/sales?per_page=100&estado=Completada&${month}`),
      targets: [p50Within(30), rateAtLeast(200), ratioAtLeast(0.75)],
    },
    {
      name: `GET /sales?per_page=100&page=${deepPage}`,
      baseline: true,
      next: () => get(`/sales?per_page=100&page=${deepPage}`),
      targets: [p50Within(150), rateAtLeast(200), ratioAtLeast(0.75)],
    },
    {
      name: `GET /sales?per_page=100&order_by=total&page=${deepPage}`,
      baseline: true,
      next: () => get(`/sales?per_page=100&order_by=total&page=${deepPage}`),
      targets: [p50Within(150), ratioAtLeast(0.75)],
    },
    {
      name: 'GET /sales/summary (everything)',
      baseline: true,
      next: () => get('/sales/summary'),
      targets: [p50Within(100), ratioAtLeast(0.75)],
    },
    {
      name: 'GET /sales/summary (one month)',
      baseline: true,
      next: () => get(`/sales/summary?${month}`),
      targets: [p50Within(100), ratioAtLeast(0.75)],
    },
    {
      name: 'GET /returns?per_page=100 (first page)',
      baseline: true,
      next: () => get('/returns?per_page=100'),
      targets: [ratioAtLeast(0.75)],
    },
    { name: 'GET /returns/summary', baseline: true, next: () => get('/returns/summary'), targets: [ratioAtLeast(0.75)] },
    ...conditionalReads(),
    // The single write paths: issue 38 asks 70 % of the baseline (issue 19 asked 60 %).
    { name: 'POST /sales (3 lines, one document type)', baseline: true, next: saleBody(() => oneDocument), targets: [ratioAtLeast(0.7)] },
    {
      name: SINGLE_SALES,
      baseline: true,
      next: saleBody(spread),
      targets: [rateAtLeast(250), ratioAtLeast(0.7)],
    },
    {
      name: `POST /sales/batch (${BATCH_SIZE} sales of 3 lines, four document types)`,
      baseline: false,
      // A request is a hundred sales, longer than a timed run on a busy machine: a burst of them is
      // measured to its last answer instead, as many at once as the single sales' connections.
      amount: 30,
      salesPerRequest: BATCH_SIZE,
      next: batchBody,
      targets: [salesRateAtLeast(3, SINGLE_SALES, BATCH_SIZE)],
    },
    ...(f.pendingSales.length > 0
      ? [
          {
            name: 'PUT /sales/{id} (one more unit on a line of a pending sale)',
            baseline: true,
            next: updateBody,
            targets: [ratioAtLeast(0.7)],
          },
        ]
      : []),
    { name: 'POST /packages/import (500 items)', baseline: false, connections: 1, next: importBody, targets: [p50Within(250)] },
    ...(f.webhook ? [webhookBurst(f, f.webhook, runTag, databaseUrl)] : []),
    partnerEvents(
      saleBody(() => oneDocument),
      databaseUrl,
    ),
  ];
}

const PAGE_200 = 'GET /sales?per_page=200 (first page)';

/**
 * The same 200-row page read three ways: as it is, with gzip (the compression's cost in req/s,
 * and the bytes it saves), and conditionally with the ETag of the page, answered 304.
 */
function conditionalReads(): Scenario[] {
  const page = get('/sales?per_page=200');
  let etag = '';
  return [
    { name: PAGE_200, baseline: false, next: () => page, measureBytes: true, targets: [] },
    {
      name: `${PAGE_200} with Accept-Encoding: gzip`,
      baseline: false,
      next: () => ({ ...page, headers: { 'accept-encoding': 'gzip' } }),
      reference: PAGE_200,
      targets: [],
    },
    {
      name: `${PAGE_200} with If-None-Match: its ETag (304)`,
      baseline: false,
      prepare: async ({ send }) => {
        etag = (await send(page)).headers.get('etag') ?? '';
      },
      next: () => ({ ...page, headers: { 'if-none-match': etag } }),
      status: 304,
      reference: PAGE_200,
      targets: [referenceTimes(2)],
    },
  ];
}

/**
 * `POST /sales` with a subscription to every event whose receiver on loopback answers 204 at once:
 * how late each `sale.created` arrives during the load (from the sale's `created_at`), how long
 * the events left at the end take; then a replay of the run's events as a backlog, and how fast
 * it drains. The subscription is deleted after.
 */
function partnerEvents(next: () => LoadRequest, databaseUrl: string): Scenario {
  const arrivals: Array<{ at: number; type: string; recordedAt: number; createdAt?: string }> = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        type: string;
        timestamp: string;
        data: { created_at?: string };
      };
      arrivals.push({
        at: Date.now(),
        type: event.type,
        recordedAt: Date.parse(event.timestamp),
        ...(event.data.created_at ? { createdAt: event.data.created_at } : {}),
      });
      res.statusCode = 204;
      res.end();
    });
  });
  let api: { root: string; headers: Record<string, string>; suscripcion: number } | undefined;
  const pendientes = async (client: pg.Client) => {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from subscriptions.entregas where suscripcion_id = $1 and estado = 'pendiente'`,
      [api!.suscripcion],
    );
    return rows[0]!.n;
  };
  const drained = async (client: pg.Client, deadline: number) => {
    while ((await pendientes(client)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  };
  const settle = async (startedAt: Date): Promise<Settled> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const endedAt = Date.now();
      const atEnd = await pendientes(client);
      await drained(client, Date.now() + SETTLE_TIMEOUT_MS);
      const run = arrivals.filter((a) => a.at >= startedAt.getTime());
      const lags = run
        .filter((a) => a.type === 'sale.created' && a.createdAt && a.at <= endedAt)
        .map((a) => a.at - Date.parse(a.createdAt!))
        .sort((a, b) => a - b);
      const dispatch = run
        .filter((a) => a.at <= endedAt)
        .map((a) => a.at - a.recordedAt)
        .sort((a, b) => a - b);
      const quantile = (q: number, of = lags) => of[Math.min(of.length - 1, Math.floor(q * of.length))] ?? 0;
      const seconds = run.length > 1 ? (run.at(-1)!.at - run[0]!.at) / 1000 : 0;

      const before = arrivals.length;
      const replay = await fetch(`${api!.root}/event-subscriptions/${api!.suscripcion}/replay`, {
        method: 'POST',
        headers: api!.headers,
        body: JSON.stringify({ desde: startedAt.toISOString() }),
      });
      const queued = ((await replay.json()) as { data: { encolados: number } }).data.encolados;
      await drained(client, Date.now() + SETTLE_TIMEOUT_MS);
      const backlog = arrivals.slice(before);
      const drainSeconds = backlog.length > 1 ? (backlog.at(-1)!.at - backlog[0]!.at) / 1000 : 0;
      return {
        what: `events delivered (${atEnd} still owed when the writes ended)`,
        processed: run.length,
        failed: 0,
        pending: await pendientes(client),
        seconds,
        rate: seconds > 0 ? run.length / seconds : 0,
        lagMs: {
          p50: quantile(0.5),
          p99: quantile(0.99),
          max: lags.at(-1) ?? 0,
          dispatchP50: quantile(0.5, dispatch),
          dispatchP99: quantile(0.99, dispatch),
        },
        drain: { events: queued, seconds: drainSeconds, rate: drainSeconds > 0 ? backlog.length / drainSeconds : 0 },
      };
    } finally {
      await client.end();
      // The receiver closes with the run: a subscription left behind would owe it every later run's events.
      await fetch(`${api!.root}/event-subscriptions/${api!.suscripcion}`, { method: 'DELETE', headers: api!.headers });
    }
  };
  return {
    name: 'POST /sales (3 lines) with a subscription to every event',
    baseline: false,
    next,
    async prepare({ apiRoot: root, headers }) {
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiver.unref();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
      const res = await fetch(`${root}/event-subscriptions`, { method: 'POST', headers, body: JSON.stringify({ url, events: ['*'] }) });
      if (res.status !== 201) throw new Error(`subscribing the receiver answered ${res.status}: ${await res.text()}`);
      api = { root, headers, suscripcion: ((await res.json()) as { data: { id: number } }).data.id };
    },
    settle,
    targets: [
      { label: 'sale.created p99 ≤ 5 s behind its sale', met: (r) => r.settled?.lagMs !== undefined && r.settled.lagMs.p99 <= 5_000 },
      { label: 'a backlog drains ≥ 500 events/s', met: (r) => r.settled?.drain !== undefined && r.settled.drain.rate >= 500 },
    ],
  };
}

export const WEBHOOK_BURST = 5_000;
const SETTLE_TIMEOUT_MS = 240_000;

/**
 * 5,000 WooCommerce order deliveries (signed, one to three lines by SKU, each a new order) as fast
 * as the gateway accepts them; then the harness watches the deliveries until every one is
 * processed into a sale (or failed), or four minutes pass. The baseline accepts 5,000 more.
 */
function webhookBurst(f: Facts, webhook: NonNullable<Facts['webhook']>, runTag: string, databaseUrl: string): Scenario {
  const product = cycle(f.saleProducts);
  // Order ids unique to this run: WooCommerce ids are integers.
  const firstOrder = Number.parseInt(runTag, 36) % 1_000_000_000;
  let order = 0;
  const next = (): LoadRequest => {
    const id = firstOrder * 10 + ++order;
    const lines = Array.from({ length: 1 + (order % 3) }, () => {
      const p = product();
      const net = Math.round((p.precio * 100) / 1.13);
      return {
        product_id: 9_000_000 + p.id,
        sku: p.codigo,
        quantity: 1,
        total: (net / 100).toFixed(2),
        total_tax: ((Math.round(p.precio * 100) - net) / 100).toFixed(2),
      };
    });
    const body = JSON.stringify(
      wooOrder({ id, status: 'processing', date_modified_gmt: new Date().toISOString().slice(0, 19), line_items: lines }),
    );
    return {
      method: 'POST',
      path: `${WEBHOOK_BASE}/woocommerce/${webhook.token}`,
      body,
      headers: wooHeaders(body, 'order.created', webhook.secret),
    };
  };
  const settle = async (startedAt: Date): Promise<Settled> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const deadline = Date.now() + SETTLE_TIMEOUT_MS;
      for (;;) {
        const { rows } = await client.query<{ processed: number; failed: number; pending: number; seconds: number | null }>(
          `select count(*) filter (where estado = 'procesada')::int as processed,
                  count(*) filter (where estado in ('fallida', 'ignorada'))::int as failed,
                  count(*) filter (where estado = 'recibida')::int as pending,
                  extract(epoch from max(procesada_at) - min(recibida_at))::float8 as seconds
             from webhook_ingest.entregas where integracion_id = $1 and recibida_at >= $2`,
          [webhook.integracionId, startedAt],
        );
        const r = rows[0]!;
        if (r.pending === 0 || Date.now() > deadline) {
          const seconds = r.seconds ?? 0;
          return { processed: r.processed, failed: r.failed, pending: r.pending, seconds, rate: seconds > 0 ? r.processed / seconds : 0 };
        }
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    } finally {
      await client.end();
    }
  };
  return {
    name: `burst of ${WEBHOOK_BURST.toLocaleString('en-US')} webhook deliveries (WooCommerce orders)`,
    // Its baseline accepts the same deliveries (node:http storing the same row, webhook-baseline.ts).
    baseline: true,
    absolute: true,
    amount: WEBHOOK_BURST,
    next,
    settle,
    targets: [
      { label: 'accepted ≥ 1,000/s', met: (r) => r.full.non2xx === 0 && r.full.rps >= 1_000 },
      { label: 'processed into sales ≥ 150/s', met: (r) => r.settled !== undefined && r.settled.pending === 0 && r.settled.rate >= 150 },
    ],
  };
}

/** Scenarios of the issue whose routes or loaders have not landed; each is probed so the report says which. */
export function pendingScenarios(f: Facts): Pending[] {
  return [
    ...(f.pendingSales.length > 0
      ? []
      : [
          {
            name: 'PUT /sales/{id}',
            reason: 'the bench data has no pending sale to change',
            probe: { method: 'PUT' as const, path: `${API_BASE}/sales/1`, body: '{}' },
          },
        ]),
    ...(f.webhook
      ? []
      : [
          {
            name: `burst of ${WEBHOOK_BURST.toLocaleString('en-US')} webhook deliveries`,
            reason: 'the bench data has no webhook integration (run `npm run bench:data` again)',
            probe: { method: 'POST' as const, path: `${WEBHOOK_BASE}/woocommerce/bench-probe`, body: '{}' },
          },
        ]),
  ];
}
