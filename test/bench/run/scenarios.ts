import pg from 'pg';
import { API_BASE, WEBHOOK_BASE } from '@erp/contracts';
import { benchApiKey } from '../data/plan';
import type { HandlerTime, LoadRequest, LoadResult } from './load';

/** What the scenarios need to know about the loaded data, read once from the bench database. */
export interface Facts {
  empresaId: number;
  apiKey: string;
  /** Live products of the large company, in a fixed random order. */
  productIds: number[];
  /** Enabled physical products, for sale lines. */
  saleProductIds: number[];
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
    const empresa = await client.query<{ id: number }>(`select id from gateway.empresas where clave = $1`, [clave]).catch(() => ({ rows: [] }));
    if (empresa.rows.length === 0) throw new Error('the bench database has no bench company: run `npm run bench:data` first');
    const empresaId = empresa.rows[0]!.id;
    const ids = async (sql: string) => (await client.query<{ id: number }>(sql, [empresaId])).rows.map((r) => r.id);
    const productIds = await ids(`select id from inventory.productos where empresa_id = $1 and deleted_at is null order by md5(id::text) limit 2000`);
    const saleProductIds = await ids(`select id from inventory.productos where empresa_id = $1 and deleted_at is null and enable and tipo = 'Producto' order by md5(id::text) limit 2000`);
    const { rows: branch } = await client.query<{ sucursal_id: number; bodega_id: number; documentos: number[] }>(
      `select b.sucursal_id, min(b.id)::int as bodega_id,
              (select array_agg(d.id order by d.id) from sales.documentos d where d.sucursal_id = b.sucursal_id and d.activo and not d.solo_cotizacion) as documentos
         from inventory.bodegas b where b.empresa_id = $1 and b.activo group by b.sucursal_id order by b.sucursal_id limit 1`,
      [empresaId],
    );
    const { rows: canal } = await client.query<{ id: number }>(`select min(id)::int as id from sales.canales where empresa_id = $1 and activo`, [empresaId]);
    const { rows: sales } = await client.query<{ n: number; last: string | null }>(`select count(*)::int as n, max(fecha)::text as last from sales.ventas where empresa_id = $1`, [empresaId]);
    const today = new Date().toISOString().slice(0, 10);
    const last = new Date(`${sales[0]?.last ?? today}T00:00:00Z`);
    const inicio = new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth() - 1, 1));
    const fin = new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth(), 0));
    return {
      empresaId,
      apiKey: benchApiKey(clave),
      productIds,
      saleProductIds,
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
  /** Mean handler time of each NATS subject during the full-path run. */
  handlers: HandlerTime[];
}

export interface Target {
  label: string;
  met(r: ScenarioResult): boolean;
}

export interface Scenario {
  name: string;
  /** Reads also run against the baseline with the same paths. */
  baseline: boolean;
  connections?: number;
  /** The next request, path relative to the API base (and to the baseline's root). */
  next(): LoadRequest;
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

/** A run in which no request completed has no latency to compare: it misses every target. */
const p50Within = (ms: number): Target => ({ label: `p50 ≤ ${ms} ms`, met: (r) => r.full.requests > 0 && r.full.p50 <= ms });
const rateAtLeast = (rps: number): Target => ({ label: `≥ ${rps} req/s`, met: (r) => r.full.rps >= rps });
const ratioAtLeast = (ratio: number): Target => ({
  label: `≥ ${Math.round(ratio * 100)} % of baseline req/s`,
  met: (r) => r.baseline !== undefined && r.full.rps >= ratio * r.baseline.rps,
});
/** Every scenario: each service stays under 200 MB. */
const rssTarget: Target = { label: 'every service < 200 MB RSS', met: (r) => Object.values(r.rss).every((b) => b < RSS_LIMIT) };

function cycle<T>(items: readonly T[]): () => T {
  let i = 0;
  return () => items[i++ % items.length]!;
}

const get = (path: string): LoadRequest => ({ method: 'GET', path });

/** The scenarios of issue 11 that the routes that exist today allow. */
export function scenarios(f: Facts, runTag: string): Scenario[] {
  const product = cycle(f.productIds);
  const saleProduct = cycle(f.saleProductIds);
  const nombres = cycle(['martillo', 'cable', 'café', 'pintura', 'detergente', 'tornillo premium']);
  const lastPage = Math.max(1, Math.ceil(f.salesCount / 100));
  const deepPage = Math.min(5_000, lastPage);
  const month = `fecha_inicio=${f.month.inicio}&fecha_fin=${f.month.fin}`;
  const saleBody = (documento: () => number) => () => ({
    method: 'POST' as const,
    path: '/sales',
    body: JSON.stringify({
      fecha: f.today,
      estado: 'Pagada',
      id_sucursal: f.sucursalId,
      id_bodega: f.bodegaId,
      id_documento: documento(),
      id_canal: f.canalId,
      detalles: [saleProduct(), saleProduct(), saleProduct()].map((id_producto, i) => ({ id_producto, cantidad: i + 1 })),
    }),
  });
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
  const oneDocument = f.documentoIds[0]!;
  const spread = cycle(f.documentoIds);
  return [
    { name: 'GET /inventory/{id}', baseline: true, next: () => get(`/inventory/${product()}`), targets: [ratioAtLeast(0.6), rssTarget] },
    { name: 'GET /inventory?nombre=…', baseline: true, next: () => get(`/inventory?nombre=${encodeURIComponent(nombres())}`), targets: [p50Within(30), rssTarget] },
    { name: 'GET /inventory/summary', baseline: true, next: () => get('/inventory/summary'), targets: [p50Within(100), rssTarget] },
    { name: 'GET /sales?per_page=100 (first page)', baseline: true, next: () => get('/sales?per_page=100'), targets: [p50Within(30), rssTarget] },
    { name: 'GET /sales?per_page=100 (one month, Completada)', baseline: true, next: () => get(`/sales?per_page=100&estado=Completada&${month}`), targets: [p50Within(30), rssTarget] },
    { name: `GET /sales?per_page=100&page=${deepPage}`, baseline: true, next: () => get(`/sales?per_page=100&page=${deepPage}`), targets: [p50Within(150), rssTarget] },
    { name: 'GET /sales/summary (everything)', baseline: true, next: () => get('/sales/summary'), targets: [p50Within(100), rssTarget] },
    { name: 'GET /sales/summary (one month)', baseline: true, next: () => get(`/sales/summary?${month}`), targets: [p50Within(100), rssTarget] },
    { name: 'POST /sales (3 lines, one document type)', baseline: false, next: saleBody(() => oneDocument), targets: [rateAtLeast(150), rssTarget] },
    { name: 'POST /sales (3 lines, four document types)', baseline: false, next: saleBody(spread), targets: [rateAtLeast(300), rssTarget] },
    { name: 'POST /packages/import (500 items)', baseline: false, connections: 1, next: importBody, targets: [p50Within(250), rssTarget] },
  ];
}

/** Scenarios of the issue whose routes or loaders have not landed; each is probed so the report says which. */
export function pendingScenarios(): Pending[] {
  return [
    { name: 'PUT /sales/{id}', reason: 'scenario not written yet', probe: { method: 'PUT', path: `${API_BASE}/sales/1`, body: '{}' } },
    {
      name: 'burst of 5,000 webhook deliveries (acceptance rate, time until all are sales)',
      reason: 'scenario not written yet',
      probe: { method: 'POST', path: `${WEBHOOK_BASE}/woocommerce/bench-probe`, body: '{}' },
    },
  ];
}
