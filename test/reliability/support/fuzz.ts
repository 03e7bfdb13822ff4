import fc from 'fast-check';
import { SchemaClients, type DatabaseUrls, type Query } from '@erp/back-office';
import { z } from 'zod';
import {
  API_BASE,
  ESTADOS_VENTA,
  ESTADOS_VENTA_ACTUALIZACION,
  INVENTORY_ORDER_BY,
  REASON_VALUES,
  SALES_ORDER_BY,
  WEBHOOK_BASE,
} from '@erp/contracts';
import { apiRoutes } from '../../../services/gateway/src/http/routes';
import { WEBHOOK_ROUTES } from '../../../services/gateway/src/http/webhooks';
import { shopifyHeaders, shopifyOrderBody, sign, wooHeaders, wooOrder } from '../../../services/webhook-ingest/test/platform.factories';
import { WOO_SECRET, type Company, type CompanyRef } from './fixture';
import { call, type Attempt } from './http';
import { settle } from './invariants';
import { rowText } from './row-text';

/** What the fuzzer needs of a running system. */
export interface FuzzTarget {
  baseUrl: string;
  databases: DatabaseUrls;
  companies: Record<CompanyRef, Company>;
}

export interface FuzzOptions {
  /** Cases generated per endpoint. */
  runs: number;
  /** Cases per webhook endpoint (each accepted delivery is processed before the next case); `runs` when omitted. */
  webhookRuns?: number;
  seed: number;
  /** Stop collecting after this many violations. */
  maxViolations?: number;
}

/** One generated request. */
export interface FuzzCase {
  endpoint: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Whether this request carries a valid key and reaches a route with its own method (the quota headers are due). */
  authenticated: boolean;
}

export interface FuzzViolation {
  request: FuzzCase;
  status: number;
  problem: string;
  /** The start of the response body, for the report. */
  answer: string;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  byEndpoint: Record<string, { cases: number; statuses: Record<string, number>; ms: number }>;
  violations: FuzzViolation[];
  /** Refused requests whose data snapshot was compared before and after. */
  refusedWritesChecked: number;
}

interface Endpoint {
  label: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  webhook?: boolean;
  arb: fc.Arbitrary<FuzzCase>;
}

// 409: a reference (or Idempotency-Key) sent again with another body.
const ERROR_STATUSES = new Set([400, 401, 404, 405, 409, 413, 414, 415, 422, 429, 431]);

/**
 * Property-based fuzzing of every endpoint of the route table (and the webhooks): query strings,
 * path ids and JSON bodies, valid and invalid, with and without a key. For every answer: never a
 * 5xx, always the error envelope whose `code` equals the status and whose `reason` is one of the
 * documented enum, the quota headers after
 * authentication, and no change of data from a refused request (all tables compared before
 * and after). Accepted writes are allowed to change data; the system is let to settle after them.
 */
export async function fuzzApi(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const endpoints = endpointsOf(target, await keysToFuzz(target));
  const report: FuzzReport = { seed: options.seed, cases: 0, byEndpoint: {}, violations: [], refusedWritesChecked: 0 };
  const db = await SchemaClients.connect(target.databases);
  try {
    const snapshot = await snapshotter(db.each);
    // What the setup set in motion (events still in outboxes) finishes before the first baseline.
    await settle(target.databases, 30_000, 20);
    let baseline = await snapshot();
    for (const [i, endpoint] of endpoints.entries()) {
      const cases = fc.sample(endpoint.arb, {
        numRuns: endpoint.webhook ? (options.webhookRuns ?? options.runs) : options.runs,
        seed: options.seed + i,
      });
      const stats = (report.byEndpoint[endpoint.label] ??= { cases: 0, statuses: {}, ms: 0 });
      const started = performance.now();
      const run = async (request: FuzzCase) => {
        const answer = await call(`${target.baseUrl}${request.path}`, {
          method: request.method,
          headers: request.headers,
          ...(request.body !== undefined ? { body: request.body } : {}),
        });
        report.cases++;
        stats.cases++;
        const status = String(answer.status || answer.error);
        stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
        return { answer, problems: checkAnswer(request, answer) };
      };
      // A read endpoint's cases in another method (a PUT on /sales/{id}) are writes like any other.
      const isRead = (request: FuzzCase) => endpoint.method === 'get' && (request.method === 'GET' || request.method === 'HEAD');
      const reads = cases.filter(isRead);
      if (reads.length > 0) {
        // Reads change nothing (checked over the whole batch), so they run a few at a time.
        await inParallel(reads, 4, async (request) => {
          const { answer, problems } = await run(request);
          for (const problem of problems)
            report.violations.push({ request, status: answer.status, problem, answer: answer.text.slice(0, 300) });
        });
        const after = await snapshot();
        const changed = diff(baseline, after);
        if (changed.length > 0)
          report.violations.push({
            request: reads[0]!,
            status: 0,
            problem: `reads of ${endpoint.label} changed data: ${changed.join(', ')}`,
            answer: '',
          });
        baseline = after;
      }
      for (const request of cases.filter((c) => !isRead(c))) {
        const { answer, problems } = await run(request);
        const write = request.method !== 'GET' && request.method !== 'HEAD';
        if (write && answer.status >= 200 && answer.status < 300) {
          // An accepted write changes data, also asynchronously (events, deliveries): wait for it.
          const pending = await settle(target.databases, 30_000, 20);
          if (pending.length > 0) problems.push(`system did not settle after an accepted write: ${pending.join(', ')}`);
          baseline = await snapshot();
        } else if (write) {
          const after = await snapshot();
          report.refusedWritesChecked++;
          const changed = diff(baseline, after);
          if (changed.length > 0) problems.push(`refused request changed data: ${changed.join(', ')}`);
          baseline = after;
        }
        for (const problem of problems)
          report.violations.push({ request, status: answer.status, problem, answer: answer.text.slice(0, 300) });
        if (report.violations.length >= (options.maxViolations ?? 50)) return report;
      }
      stats.ms += performance.now() - started;
    }
    return report;
  } finally {
    await db.end();
  }
}

async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** The problems of one answer (empty when it is as the guarantees say). */
export function checkAnswer(request: FuzzCase, answer: Attempt): string[] {
  if (answer.status === 0) return [`no answer (${answer.error})`];
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  else if (answer.status >= 300 && answer.status < 400) problems.push(`unexpected redirect ${answer.status}`);
  else if (answer.status >= 400 && !ERROR_STATUSES.has(answer.status))
    problems.push(`status ${answer.status} is not one of the documented error statuses`);
  if (request.method === 'HEAD') return problems;
  const body = answer.body;
  if (answer.status >= 400) {
    const envelope = z
      .object({
        success: z.literal(false),
        error: z.string().min(1),
        code: z.number(),
        reason: z.enum(REASON_VALUES),
        details: z.record(z.string(), z.array(z.string())).optional(),
      })
      .strict();
    const parsed = envelope.safeParse(body);
    if (!parsed.success)
      problems.push(`not the error envelope: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    else if (parsed.data.code !== answer.status) problems.push(`envelope code ${parsed.data.code} ≠ status ${answer.status}`);
  } else if (answer.status >= 200 && body?.success !== true) {
    problems.push('a 2xx without success: true');
  }
  if (request.authenticated && answer.status !== 401 && answer.status < 500) {
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      if (!/^\d+$/.test(answer.headers.get(header) ?? '')) problems.push(`missing or malformed ${header} after authentication`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Data snapshots: one checksum per table of every service schema.

type Snapshot = Map<string, string>;

/** Count and checksum of every table, on every database the schemas live in. */
async function snapshotter(databases: Query[]): Promise<() => Promise<Snapshot>> {
  const statements = await Promise.all(
    databases.map(async (q) => {
      const tables = await q(
        `select table_schema as schema, table_name as table from information_schema.tables
         where table_type = 'BASE TABLE' and table_schema in ('gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook_ingest')
           and table_name not like 'kysely_%' order by 1, 2`,
      );
      const sql = tables
        .map(
          ({ schema, table }) =>
            `select '${schema}.${table}' as t, count(*)::text || ':' || md5(coalesce(string_agg(${rowText(schema, table)}, '|' order by ${rowText(schema, table)}), '')) as h from "${schema}"."${table}" x`,
        )
        .join(' union all ');
      return { q, sql };
    }),
  );
  return async () => {
    const snapshot: Snapshot = new Map();
    for (const { q, sql } of statements) if (sql) for (const r of await q(sql)) snapshot.set(r.t, r.h);
    return snapshot;
  };
}

function diff(before: Snapshot, after: Snapshot): string[] {
  return [...after.keys()].filter((t) => before.get(t) !== after.get(t));
}

// ---------------------------------------------------------------------------------------------
// Generators.

/** Values that break parsers: empty, whitespace, signs, exponents, overflow, dates that do not exist, injection, control and astral characters. */
const NASTY_TEXT = [
  '',
  ' ',
  '0',
  '-0',
  '1',
  '-1',
  '01',
  '1.0',
  '1.5',
  '1e3',
  '0x10',
  '+1',
  '١',
  '１',
  '2147483647',
  '2147483648',
  '9007199254740993',
  '99999999999999999999999',
  'true',
  'false',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '[]',
  '{}',
  '2026-01-01',
  '2026-12-31',
  '2026-02-30',
  '2026-13-01',
  '0000-00-00',
  '2026-1-1',
  '20260101',
  "' or 1=1 --",
  '"; drop table ventas; --',
  '%',
  '%00',
  '\u0000',
  '\u202e',
  '😀',
  '𝔘𝔫𝔦',
  'a'.repeat(300),
  'é'.repeat(101),
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
];

const nastyText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_TEXT) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: false }).map(String) },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)) },
);

const nastyJson: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      0.00001,
      1e21,
      -1e308,
      1.23456789,
      2147483648,
      Number.MAX_SAFE_INTEGER + 2,
      '',
      ' ',
      'x',
      '1',
      'abc',
      [],
      {},
      [[]],
      { a: 1 },
    ),
  },
  { weight: 2, arbitrary: nastyText },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer({ min: -1_000_000, max: 3_000_000_000 }) },
);

/** Valid values of the query keys the contracts know, so some cases pass validation and reach the services. */
function validQueryValues(companies: Record<CompanyRef, Company>): Record<string, fc.Arbitrary<string>> {
  const date = fc
    .date({ min: new Date('2025-01-01'), max: new Date('2027-12-31'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
  const ventas = [...Object.values(companies.a.ventas), ...Object.values(companies.b.ventas)];
  return {
    page: fc.integer({ min: 1, max: 5 }).map(String),
    per_page: fc.integer({ min: 1, max: 200 }).map(String),
    fecha_inicio: date,
    fecha_fin: date,
    estado: fc.constantFrom(...ESTADOS_VENTA),
    order_by: fc.constantFrom(...SALES_ORDER_BY, ...INVENTORY_ORDER_BY),
    order_direction: fc.constantFrom('asc', 'desc', 'ASC', 'Desc'),
    tipo: fc.constantFrom('Producto', 'Servicio'),
    enable: fc.constantFrom('0', '1'),
    con_stock: fc.constantFrom('true', 'false', '1', '0'),
    stock_minimo: fc.constantFrom('true', 'false', '1', '0'),
    codigo: fc.constantFrom('LAP', 'MOU-01', 'lap-14', '%', '_'),
    nombre: fc.constantFrom('laptop', 'Mouse', 'ó', '%_'),
    categoria: fc.constantFrom('Electrónicos', 'acc', 'Sin categoría'),
    marca: fc.constantFrom('Acer', 'logi'),
    id_venta: fc.constantFrom(...ventas.map(String)),
  };
}

function queryKeysOf(schema: unknown): string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

function queryArb(keys: string[], valid: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const known = [...new Set([...keys, 'page', 'per_page'])];
  const value = (key: string) => fc.oneof({ weight: 3, arbitrary: valid[key] ?? nastyText }, { weight: 2, arbitrary: nastyText });
  const pair = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known).chain((k) => value(k).map((v) => [k, v] as const)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('foo', 'page[]', 'estado[a]', '__proto__', 'x'.repeat(200), ''), nastyText) },
  );
  const encode = fc.constantFrom('component', 'component', 'component', 'raw');
  return fc.tuple(fc.array(fc.tuple(pair, encode), { maxLength: 6 }), fc.boolean()).map(([pairs, repeatOne]) => {
    const parts = pairs.map(([[k, v], how]) => (how === 'raw' ? `${k}=${v}` : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`));
    // A key twice makes it an array for the query parser.
    if (repeatOne && pairs[0]) parts.push(`${encodeURIComponent(pairs[0][0][0])}=${encodeURIComponent(pairs[0][0][1])}`);
    return parts.length > 0 ? `?${parts.join('&')}` : '';
  });
}

/** Path ids: the company's own and the other company's, out of range, not integers, badly encoded. */
function idArb(own: number[], other: number[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...own.map(String)) },
    { weight: 2, arbitrary: fc.constantFrom(...other.map(String)) },
    { weight: 2, arbitrary: fc.integer({ min: -5, max: 3_000_000_000 }).map(String) },
    { weight: 2, arbitrary: nastyText.map(encodeURIComponent) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%2F', '..', '.', '1%00', '1;2', '1,2', '%31', '1%20', ' 1'.replace(' ', '%20')),
    },
  );
}

interface AuthChoice {
  header?: string;
  /** A valid key of company A: the quota headers are due on the answer. */
  valid: boolean;
}

function authArb(companies: Record<CompanyRef, Company>): fc.Arbitrary<AuthChoice> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant({ header: `Bearer ${companies.a.key}`, valid: true }) },
    { weight: 1, arbitrary: fc.constant({ valid: false }) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          'Bearer',
          'Bearer ',
          `bearer ${companies.a.key}`,
          `Basic ${Buffer.from('a:b').toString('base64')}`,
          `Bearer ${companies.a.key}x`,
          'Bearer ' + 'k'.repeat(5000),
          `Bearer  ${companies.a.key}`,
        )
        .map((header) => ({ header, valid: header.toLowerCase() === `bearer ${companies.a.key}` })),
    },
    // Header values must be printable ASCII to be sent at all.
    { weight: 1, arbitrary: nastyText.map((t) => ({ header: `Bearer ${t.replace(/[^\x20-\x7e]/g, '')}`.trimEnd(), valid: false })) },
  );
}

/** A JSON body mutated once: a value replaced, a key removed or added, or the whole body swapped. */
function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(base, fc.nat(), fc.constantFrom('replace', 'replace', 'delete', 'add', 'whole'), nastyJson)
    .map(([value, pick, op, replacement]) => {
      if (op === 'whole') return replacement;
      const copy = structuredClone(value) as Record<string, unknown>;
      const paths = pathsOf(copy);
      if (paths.length === 0) return replacement;
      const path = paths[pick % paths.length]!;
      const parent = path.slice(0, -1).reduce<Record<string, unknown>>((node, k) => node[k] as Record<string, unknown>, copy);
      const key = path[path.length - 1]!;
      if (op === 'delete') {
        if (Array.isArray(parent)) parent.splice(Number(key), 1);
        else delete parent[key];
      } else if (op === 'add') {
        if (Array.isArray(parent)) parent.push(replacement);
        else parent[`${key}_extra`] = replacement;
      } else {
        parent[key] = replacement;
      }
      return copy;
    });
}

function pathsOf(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k])]);
}

/** Raw bodies that are not the JSON they claim to be, or JSON that tests the parser's limits. */
const RAW_BODIES = [
  '',
  '{',
  '[',
  '{"a":',
  'null',
  'true',
  '"text"',
  '123',
  '[]',
  '{}',
  '{"detalles": [',
  '\uFEFF{}',
  '{"a":1}{"b":2}',
  "{'a': 1}",
  '{"cantidad": NaN}',
  '{"x": Infinity}',
  `{"packages": [${'['.repeat(5_000)}${']'.repeat(5_000)}]}`,
  `{"detalles": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
  `{"a": "${'\\u0000'.repeat(100)}"}`,
  '{"__proto__": {"admin": true}}',
  `{"constructor": {"prototype": {"x": 1}}}`,
  JSON.stringify({ packages: Array.from({ length: 501 }, () => ({})) }),
];

type BodyChoice = { body?: string; contentType?: string };

function bodyArb(valid: fc.Arbitrary<unknown> | undefined): fc.Arbitrary<BodyChoice> {
  const json = valid
    ? fc.oneof({ weight: 3, arbitrary: valid }, { weight: 5, arbitrary: mutated(valid) }, { weight: 1, arbitrary: nastyJson })
    : nastyJson;
  return fc.oneof(
    { weight: 12, arbitrary: json.map((v) => ({ body: JSON.stringify(v) ?? 'null', contentType: 'application/json' })) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES).map((body) => ({ body, contentType: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          json,
          fc.constantFrom(
            undefined,
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
            'application/json; charset=utf-16',
            'multipart/form-data',
            'application/vnd.api+json',
            '*/*',
          ),
        )
        .map(([v, contentType]) => ({ body: JSON.stringify(v) ?? 'null', ...(contentType ? { contentType } : {}) })),
    },
    { weight: 1, arbitrary: fc.constant<BodyChoice>({}) },
    {
      weight: 1,
      arbitrary: fc.constant<BodyChoice>({ body: `{"observaciones": "${'x'.repeat(1024 * 1024)}"}`, contentType: 'application/json' }),
    },
  );
}

function validSaleBody(c: Company): fc.Arbitrary<unknown> {
  const line = fc.record(
    {
      id_producto: fc.constantFrom(...Object.values(c.productos)),
      cantidad: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constantFrom(0.5, 1.25, 0.0001)),
      precio: fc.constantFrom(0, 9.99, 100, 12.3456),
      descuento: fc.constantFrom(0, 1, 2.5),
      porcentaje_impuesto: fc.constantFrom(0, 5, 13, 100),
    },
    { requiredKeys: ['id_producto', 'cantidad'] },
  );
  return fc
    .record({
      estado: fc.constantFrom('Completada', 'Pagada', 'Pendiente', 'Cotizacion'),
      referencia_externa: fc.option(fc.constantFrom('FZ-1', 'FZ-2', 'REF-1', 'REF-2'), { nil: undefined }),
      bodega: fc.constantFrom(c.bodegas.principal!, c.bodegas.reserva!),
      documento: fc.constantFrom(c.documentos.factura!, c.documentos.ticket!),
      detalles: fc.array(line, { minLength: 1, maxLength: 3 }),
      observaciones: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
    })
    .map((v) => ({
      fecha: '2026-03-10',
      estado: v.estado,
      ...(v.referencia_externa ? { referencia_externa: v.referencia_externa } : {}),
      id_sucursal: c.sucursales.centro,
      id_bodega: v.bodega,
      id_documento: v.estado === 'Cotizacion' ? c.documentos.cotizacion : v.documento,
      ...(v.estado === 'Cotizacion' ? {} : { id_canal: c.canales.tienda }),
      ...(v.estado === 'Pendiente' ? { id_cliente: c.clientes.juan } : {}),
      ...(v.observaciones !== undefined ? { observaciones: v.observaciones } : {}),
      detalles: v.detalles,
    }));
}

function validSaleUpdate(c: Company): fc.Arbitrary<unknown> {
  return fc.record(
    {
      observaciones: fc.oneof(fc.string({ maxLength: 40 }), fc.constant(null)),
      forma_pago: fc.constantFrom('Efectivo', 'Tarjeta', null),
      fecha: fc.constantFrom('2026-03-11', '2026-03-12'),
      estado: fc.constantFrom(...ESTADOS_VENTA_ACTUALIZACION),
      id_cliente: fc.constantFrom(c.clientes.juan!, c.clientes.libre!),
      detalles: fc.array(
        fc.record({ id_producto: fc.constantFrom(...Object.values(c.productos)), cantidad: fc.integer({ min: 1, max: 4 }) }),
        { minLength: 1, maxLength: 3 },
      ),
    },
    { requiredKeys: [] },
  );
}

function validPackages(c: Company): fc.Arbitrary<unknown> {
  const item = fc.record(
    {
      cliente: fc.constantFrom('Cliente Uno', ' Cliente '),
      codigo_asesor: fc.constantFrom('AS-01', 'AS-99'),
      wr: fc.constantFrom('FZ-WR-1', 'FZ-WR-2', 'FZ-WR-3').chain((w) =>
        fc.oneof(
          fc.constant(w),
          fc.string({ minLength: 1, maxLength: 12 }).map((s) => `FZ-${s}`),
        ),
      ),
      guia: fc.constant('G-1'),
      embalaje: fc.constant('Caja'),
      piezas: fc.integer({ min: 0, max: 10 }),
      peso: fc.constantFrom(0, 2.5, 10.1234),
      precio: fc.constantFrom(0, 10, 99.99),
      cuenta_a_terceros: fc.constant(0),
      otros: fc.constant(0),
      total: fc.constantFrom(0, 10),
      sucursal: fc.constantFrom('Sucursal Centro', 'sucursal norte', 'Inexistente'),
      id_sucursal: fc.constantFrom(c.sucursales.centro!, c.sucursales.norte!),
    },
    {
      requiredKeys: [
        'cliente',
        'codigo_asesor',
        'wr',
        'guia',
        'embalaje',
        'piezas',
        'peso',
        'precio',
        'cuenta_a_terceros',
        'otros',
        'total',
      ],
    },
  );
  return fc.array(item, { minLength: 1, maxLength: 5 }).map((packages) => ({ packages }));
}

/**
 * The API keys the fuzzing may revoke and rotate: three of company A made for it. The keys company
 * A had before (the one the fuzzing and every later phase of the run send) are never a path id of
 * `/api-keys/{id}`, however the id is written: revoking or rotating them would only lock the run
 * out of its own company.
 */
async function keysToFuzz(target: FuzzTarget): Promise<{ own: number[]; kept: Set<number> }> {
  const key = target.companies.a.key;
  const listed = await call(`${target.baseUrl}${API_BASE}/api-keys`, { key });
  if (listed.status !== 200) throw new Error(`listing company A's keys answered ${listed.status}: ${listed.text.slice(0, 200)}`);
  const kept = new Set((listed.body as { data: Array<{ id: number }> }).data.map((k) => k.id));
  const own: number[] = [];
  for (let i = 1; i <= 3; i++) {
    const made = await call(`${target.baseUrl}${API_BASE}/api-keys`, {
      method: 'POST',
      key,
      json: { nombre: `fuzz ${i}`, alcances: ['sales:read'] },
    });
    if (made.status !== 201) throw new Error(`creating a key to fuzz answered ${made.status}: ${made.text.slice(0, 200)}`);
    own.push((made.body as { data: { id: number } }).data.id);
  }
  return { own, kept };
}

/** The id a path of `/api-keys/{id}` is sent with: one of the fuzzing's own keys instead of a key the run keeps. */
function sparingKeys(id: string, keys: { own: number[]; kept: Set<number> }): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    return id;
  }
  const n = Number(decoded.trim());
  return Number.isInteger(n) && keys.kept.has(n) ? String(keys.own[n % keys.own.length]) : id;
}

function endpointsOf(target: FuzzTarget, keys: { own: number[]; kept: Set<number> }): Endpoint[] {
  const { a, b } = target.companies;
  const valid = validQueryValues(target.companies);
  const auth = authArb(target.companies);
  const ownIds = (path: string) =>
    path.startsWith('/inventory') ? Object.values(a.productos) : path.startsWith('/api-keys') ? keys.own : Object.values(a.ventas);
  const otherIds = (path: string) => (path.startsWith('/inventory') ? Object.values(b.productos) : Object.values(b.ventas));
  const validBodies: Record<string, fc.Arbitrary<unknown>> = {
    'post /sales': validSaleBody(a),
    'put /sales/:id': validSaleUpdate(a),
    'post /packages/import': validPackages(a),
  };
  const endpoints: Endpoint[] = apiRoutes({ standard: 1000, withDateFilters: 2000 }).map((route) => {
    const label = `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`;
    const params = (route.path.match(/:(\w+)/g) ?? []).map((p) => p.slice(1));
    const arb = fc
      .record({
        method: fc.oneof(
          { weight: 14, arbitrary: fc.constant(route.method.toUpperCase()) },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') },
        ),
        auth,
        ids: fc.tuple(...params.map(() => idArb(ownIds(route.path), otherIds(route.path)))),
        query: queryArb(queryKeysOf(route.query), valid),
        body:
          route.method === 'get'
            ? fc.oneof({ weight: 9, arbitrary: fc.constant<BodyChoice>({}) }, { weight: 1, arbitrary: bodyArb(undefined) })
            : bodyArb(validBodies[`${route.method} ${route.path}`]),
      })
      .map(({ method, auth: who, ids, query, body }): FuzzCase => {
        const sent = route.path.startsWith('/api-keys') ? ids.map((id) => sparingKeys(id!, keys)) : ids;
        let path = route.path;
        params.forEach((p, i) => (path = path.replace(`:${p}`, sent[i]!)));
        const sendsBody = method !== 'GET' && method !== 'HEAD' && body.body !== undefined;
        return {
          endpoint: label,
          method,
          path: `${API_BASE}${path}${query}`,
          headers: {
            ...(who.header !== undefined ? { Authorization: who.header } : {}),
            ...(sendsBody && body.contentType ? { 'Content-Type': body.contentType } : {}),
          },
          ...(sendsBody ? { body: body.body } : {}),
          // Ids that change the route (empty, dots, escapes) may land on no route at all, before authentication.
          authenticated: who.valid && method === route.method.toUpperCase() && sent.every((id) => /^[^%./]+$/.test(id!)),
        };
      });
    return { label, method: route.method, path: route.path, arb };
  });

  // The webhooks: tokens valid and not, signatures valid and not, platform payloads valid and mutated.
  for (const webhook of WEBHOOK_ROUTES) {
    const integration = webhook.plataforma === 'woocommerce' ? a.integraciones.woo! : a.integraciones.shop!;
    const token = integration.path.split('/')[4]!;
    const label = `POST ${WEBHOOK_BASE}${webhook.path.replace(':token', '{token}')}`;
    const payload: fc.Arbitrary<{ body: string; headers: Record<string, string> }> =
      webhook.plataforma === 'shopify'
        ? fc
            .record({
              id: fc.bigInt({ min: 1n, max: 99_999_999_999_999_999n }),
              status: fc.constantFrom('paid', 'pending', 'refunded', 'voided', 'weird'),
              qty: fc.integer({ min: -1, max: 5 }),
              sku: fc.constantFrom('LAP-14', 'MOU-01', 'NOPE'),
            })
            .chain(({ id, status, qty, sku }) => {
              const body = shopifyOrderBody({
                id: String(id),
                financial_status: status,
                line_items: [{ id: `${id}1`, product_id: '7001', variant_id: '8001', sku, title: sku, quantity: qty, price: '10.00' }],
              });
              return fc.oneof(
                { weight: 3, arbitrary: fc.constant(body) },
                { weight: 3, arbitrary: mutated(fc.constant(JSON.parse(body))).map((v) => JSON.stringify(v) ?? 'null') },
                { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES) },
              );
            })
            .map((body) => ({ body, headers: shopifyHeaders(body, 'orders/create') }))
        : fc
            .record({
              id: fc.integer({ min: 1, max: 2_000_000_000 }),
              status: fc.constantFrom('processing', 'completed', 'pending', 'cancelled', 'refunded', 'weird'),
              qty: fc.integer({ min: -1, max: 5 }),
              sku: fc.constantFrom('LAP-14', 'MOU-01', 'NOPE'),
            })
            .chain(({ id, status, qty, sku }) => {
              const order = wooOrder({ id, status, line_items: [{ product_id: 9001, sku, quantity: qty, total: '10.00' }] });
              return fc.oneof(
                { weight: 3, arbitrary: fc.constant(order as unknown) },
                { weight: 3, arbitrary: mutated(fc.constant(order as unknown)) },
                { weight: 1, arbitrary: nastyJson },
              );
            })
            .chain((order) => {
              const body = JSON.stringify(order) ?? 'null';
              return fc.oneof(
                {
                  weight: 4,
                  arbitrary: fc.constant({
                    body,
                    headers: wooHeaders(body, webhook.recurso === 'producto' ? 'product.updated' : 'order.updated', WOO_SECRET),
                  }),
                },
                {
                  weight: 1,
                  arbitrary: fc.constant({
                    body,
                    headers: { ...wooHeaders(body, 'order.updated'), 'X-WC-Webhook-Signature': sign(body, 'wrong-secret') },
                  }),
                },
                {
                  weight: 1,
                  arbitrary: fc.constant({ body: 'webhook_id=12', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
                },
                {
                  weight: 1,
                  arbitrary: fc
                    .constantFrom(...RAW_BODIES)
                    .map((raw) => ({ body: raw, headers: wooHeaders(raw, 'order.updated', WOO_SECRET) })),
                },
              );
            });
    const arb = fc
      .record({
        method: fc.oneof(
          { weight: 14, arbitrary: fc.constant('POST') },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'OPTIONS') },
        ),
        token: fc.oneof(
          { weight: 6, arbitrary: fc.constant(token) },
          { weight: 1, arbitrary: nastyText.map(encodeURIComponent) },
          { weight: 1, arbitrary: fc.constantFrom(`${token}x`, token.toUpperCase(), b.integraciones.woo!.path.split('/')[4]!) },
        ),
        payload,
      })
      .map(({ method, token: t, payload: p }): FuzzCase => ({
        endpoint: label,
        method,
        path: `${WEBHOOK_BASE}${webhook.path.replace(':token', t || 'x')}`,
        headers: p.headers,
        ...(method !== 'GET' ? { body: p.body } : {}),
        authenticated: false,
      }));
    endpoints.push({ label, method: 'post', path: webhook.path, webhook: true, arb });
  }

  // Paths that are no endpoint at all.
  endpoints.push({
    label: 'unknown paths',
    method: 'get',
    path: '*',
    arb: fc
      .tuple(
        fc.constantFrom(API_BASE, '/api/external/v2', '/api', '', WEBHOOK_BASE),
        fc.array(
          fc.oneof(
            fc.constantFrom('sales', 'inventory', 'returns', 'x', '..', '%2e%2e', 'summary', '1'),
            nastyText.map(encodeURIComponent),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        auth,
      )
      .map(([base, segments, who]): FuzzCase => ({
        endpoint: 'unknown paths',
        method: 'GET',
        path: `${base}/${segments.join('/')}`.replace(/\/(docs|openapi\.json)(\/|$)/, '/x$2'),
        headers: who.header !== undefined ? { Authorization: who.header } : {},
        authenticated: false,
      })),
  });
  return endpoints;
}

/** The report as text: counts per endpoint and status, then the first violations. */
export function formatFuzzReport(report: FuzzReport): string {
  const lines = Object.entries(report.byEndpoint).map(
    ([label, s]) =>
      `  ${label.padEnd(52)} ${String(s.cases).padStart(5)} cases ${String(Math.round(s.ms / 1000)).padStart(4)} s  ${JSON.stringify(s.statuses)}`,
  );
  const violations = report.violations
    .slice(0, 10)
    .map(
      (v) =>
        `  ✗ ${v.request.method} ${v.request.path.slice(0, 160)} → ${v.status}: ${v.problem}\n      body sent: ${(v.request.body ?? '').slice(0, 160)}\n      answer: ${v.answer.slice(0, 200)}`,
    );
  return [
    `fuzzing (seed ${report.seed}): ${report.cases} cases, ${report.refusedWritesChecked} refused writes compared table by table, ${report.violations.length} violations`,
    ...lines,
    ...violations,
  ].join('\n');
}
