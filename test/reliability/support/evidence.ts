import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SchemaClients, type DatabaseUrls, type Row } from '@erp/back-office';
import type { ServiceName } from '@erp/contracts';
import type { FaultRecord } from './faults';
import type { Company, CompanyRef } from './fixture';
import type { InvariantResult } from './invariants';
import type { LoadLedger, PackageRecord, ReturnRecord, SaleRecord } from './load';

/**
 * A failed check's evidence, for whoever looks for its root cause: for each violation, the items
 * it names (ids and references, resolved against the load's ledger or the databases) with the
 * times they were sent, acknowledged or written; the faults of the run from a minute before those
 * times to half a minute after; where each item's event went (outbox row, published or not, the
 * partner log's row); and the log lines of the services involved: those naming the items, and
 * their warnings and errors in the window, grouped by message.
 */
export interface EvidenceInput {
  invariants: InvariantResult[];
  problems: string[];
  faults: FaultRecord[];
  ledger?: LoadLedger;
  companies: Record<CompanyRef, Company>;
  databases: DatabaseUrls;
  /** The service logs, one file per process (`sales-2.log`). */
  logDir: string;
  /** Logs of the servers (nats-server, Postgres), searched for warnings and errors in each window. */
  serverLogs?: string[];
  /** The window around the items' times. */
  beforeMs?: number;
  afterMs?: number;
  /** Violations looked into per check (the others are counted). */
  perCheck?: number;
}

type Kind = 'sale' | 'return' | 'order' | 'product update' | 'package' | 'export' | 'event' | 'reservation' | 'stock';

interface Item {
  kind: Kind;
  label: string;
  empresa?: CompanyRef;
  /** What happened to it when, epoch ms: `acknowledged`, `sent`, `written`, … */
  times: Array<{ what: string; at: number }>;
  /** Texts and ids its log lines would carry. */
  strings: string[];
  numbers: number[];
  services: ServiceName[];
}

export interface ViolationEvidence {
  check: string;
  violation: string;
  items: Item[];
  window?: { from: number; to: number; anchor: number };
  faults: FaultRecord[];
  /** Database rows on the item's way: outbox, partner log, deliveries, export job. */
  trail: string[];
  /** Service log lines naming an item. */
  named: string[];
  /** Warnings and errors of the services involved in the window, grouped. */
  window_lines: LogGroup[];
  server_lines: LogGroup[];
}

export interface LogGroup {
  source: string;
  level: string;
  message: string;
  count: number;
  first: number;
  last: number;
  sample: string;
}

interface LogLine {
  source: string;
  service: string;
  at?: number;
  level: string;
  message: string;
  text: string;
}

const SERVICES_OF: Record<Kind, ServiceName[]> = {
  sale: ['gateway', 'sales', 'inventory', 'subscriptions'],
  return: ['returns', 'sales', 'inventory', 'subscriptions'],
  order: ['webhook-ingest', 'sales', 'inventory', 'gateway'],
  'product update': ['webhook-ingest', 'inventory'],
  package: ['packages', 'gateway', 'subscriptions'],
  export: ['exports', 'gateway'],
  event: ['subscriptions'],
  reservation: ['inventory', 'sales'],
  stock: ['inventory', 'sales', 'returns', 'webhook-ingest'],
};
const EVERY_SERVICE: ServiceName[] = ['gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook-ingest', 'subscriptions', 'exports'];

export async function gatherEvidence(input: EvidenceInput): Promise<ViolationEvidence[]> {
  const beforeMs = input.beforeMs ?? 60_000;
  const afterMs = input.afterMs ?? 30_000;
  const logs = readServiceLogs(input.logDir);
  const serverLogs = (input.serverLogs ?? []).flatMap(readServerLog);
  const clients = await SchemaClients.connect(input.databases).catch(() => undefined);
  const out: ViolationEvidence[] = [];
  try {
    for (const check of input.invariants.filter((i) => i.violations.length > 0)) {
      for (const violation of check.violations.slice(0, input.perCheck ?? 10)) {
        const trail: string[] = [];
        const items = await itemsOf(violation, input, clients, trail);
        const anchors = items.flatMap((i) => i.times.filter((t) => t.what !== 'sent').map((t) => t.at));
        const window =
          anchors.length > 0
            ? { from: Math.min(...anchors) - beforeMs, to: Math.max(...anchors) + afterMs, anchor: Math.min(...anchors) }
            : undefined;
        const services = new Set(items.length > 0 ? items.flatMap((i) => i.services) : EVERY_SERVICE);
        const named = namedLines(logs, items);
        const inWindow = window
          ? logs.filter((l) => services.has(l.service as ServiceName) && l.at !== undefined && l.at >= window.from && l.at <= window.to)
          : [];
        const serverInWindow = window ? serverLogs.filter((l) => l.at !== undefined && l.at >= window.from && l.at <= window.to) : [];
        out.push({
          check: check.name,
          violation,
          items,
          ...(window ? { window } : {}),
          faults: window ? faultsWithin(input.faults, window.from, window.to) : [],
          trail,
          named,
          window_lines: group(inWindow),
          server_lines: group(serverInWindow),
        });
      }
    }
  } finally {
    await clients?.end();
  }
  return out;
}

function faultsWithin(faults: FaultRecord[], from: number, to: number): FaultRecord[] {
  return faults.filter((f) => (f.at >= from && f.at <= to) || (f.at < from && (f.until ?? f.at) >= from));
}

/** The items a violation names: references of the load, ids of sales, returns, packages, exports, events, reservations. */
async function itemsOf(violation: string, input: EvidenceInput, clients: SchemaClients | undefined, trail: string[]): Promise<Item[]> {
  const items: Item[] = [];
  const seen = new Set<string>();
  const add = (item: Item) => {
    if (seen.has(item.label) || items.length >= 6) return;
    seen.add(item.label);
    items.push(item);
  };
  const ledger = input.ledger;
  const refOf = (id: number) => Object.values(input.companies).find((c) => c.id === id)?.ref;
  const prefix = /^(a|b|s)\b[ :]/.exec(violation)?.[1] as CompanyRef | undefined;
  const empresa = prefix ?? refOf(Number(/\bempresa (\d+)/.exec(violation)?.[1]));
  const times = (entries: Array<[string, number | undefined]>) =>
    entries.filter((e): e is [string, number] => e[1] !== undefined).map(([what, at]) => ({ what, at }));

  const saleItem = (s: SaleRecord): Item => ({
    kind: 'sale',
    label: `sale ${s.id ?? '?'} (${s.empresa}:${s.referencia})`,
    empresa: s.empresa,
    times: times([
      ['sent', s.sentAt],
      ['acknowledged', s.ackedAt],
      [`last change acknowledged (${s.expected?.estado ?? s.estado})`, s.changedAt],
    ]),
    strings: [s.referencia],
    numbers: s.id !== undefined ? [s.id] : [],
    services: SERVICES_OF.sale,
  });
  if (ledger) {
    for (const ref of new Set(violation.match(/\b[a-z]+-(?:V|D|WR)\d+\b|\bwoo-producto-\d+\b|\bwoo-\d+\b|\bshop-\d+\b/g) ?? [])) {
      for (const s of ledger.sales.values()) if (s.referencia === ref) add(saleItem(s));
      for (const r of ledger.returns.values()) if (r.referencia === ref) add(returnItem(r));
      for (const o of ledger.orders.values())
        if (o.referencia === ref)
          add({
            kind: 'order',
            label: `platform order ${o.empresa}:${o.referencia}`,
            empresa: o.empresa,
            times: times([
              ['sent', o.sentAt],
              ['first delivery answered 200', o.ackedAt],
            ]),
            strings: [o.referencia],
            numbers: [],
            services: SERVICES_OF.order,
          });
      const updates = ledger.productUpdates.filter((u) => u.referencia === ref);
      for (const u of updates.slice(-3))
        add({
          kind: 'product update',
          label: `product update ${u.empresa}:${u.referencia} at ${iso(u.sentAt)}`,
          empresa: u.empresa,
          times: times([
            ['sent', u.sentAt],
            ['first delivery answered 200', u.ackedAt],
          ]),
          strings: [u.referencia],
          numbers: [],
          services: SERVICES_OF['product update'],
        });
      for (const p of ledger.packages.values()) if (p.wr === ref) add(packageItem(p));
    }
    for (const m of violation.matchAll(/\b(?:sale|venta|GET \/sales\/)[: ]?(\d+)\b/g)) {
      const id = Number(m[1]);
      for (const s of ledger.sales.values()) if (s.id === id) add(saleItem(s));
    }
    for (const m of violation.matchAll(/\b(?:return|devolucion|devoluciones) (\d+)\b/g)) {
      const id = Number(m[1]);
      for (const r of ledger.returns.values()) if (r.id === id) add(returnItem(r));
    }
    for (const m of violation.matchAll(/\bpackage (\d+)\b/g)) {
      const id = Number(m[1]);
      for (const p of ledger.packages.values()) if (p.id === id) add(packageItem(p));
    }
  }
  if (!clients) return items;
  const q = (sql: string, params: unknown[]) =>
    clients.q(sql, params).catch((err: unknown) => [{ error: (err as Error).message }] as Row[]);

  for (const m of violation.matchAll(/\bexport (\d+) of (\w+)/g)) {
    const id = Number(m[1]);
    const company = empresa ? input.companies[empresa] : undefined;
    const [row] = await q(
      `select id, empresa_id, recurso, estado, intento, objeto, objetos, bytes, cursor, error, created_at, iniciada, completada, expira, reintentar_at, lease_hasta
       from exports.exportaciones where id = $1 ${company ? 'and empresa_id = $2' : ''}`,
      company ? [id, company.id] : [id],
    );
    if (!row) continue;
    trail.push(`exports.exportaciones ${JSON.stringify(row)}`);
    const files = await q('select objeto, intento, created_at from exports.archivos where exportacion_id = $1 order by intento', [id]);
    for (const f of files) trail.push(`  exports.archivos ${JSON.stringify(f)}`);
    if (files.length === 0) trail.push('  exports.archivos: no row (every file of its attempts removed, or none recorded)');
    add({
      kind: 'export',
      label: `export ${id} of ${m[2]} (${empresa ?? '?'})`,
      ...(empresa ? { empresa } : {}),
      times: times([
        ['asked for', dateMs(row.created_at)],
        ['started', dateMs(row.iniciada)],
        ['completed', dateMs(row.completada)],
      ]),
      // The owner's writer is asked under request id `exportacion-<id>-<attempt>`.
      strings: [`exportacion-${id}-`, row.objeto, ...files.map((f) => f.objeto)].filter((s): s is string => typeof s === 'string'),
      numbers: [id],
      services: SERVICES_OF.export,
    });
    // The objects it names (missed, extra, older): when each was written and last changed, against the export's cursor.
    const objects = [...violation.matchAll(/objects[^(]*\(([\d, ]+)\)/g)].flatMap((o) => o[1]!.split(',').map((n) => Number(n.trim())));
    const table = { sales: 'sales.ventas', returns: 'returns.devoluciones' }[m[2]!];
    if (objects.length > 0 && table) {
      const rows = await q(`select id, created_at, updated_at from ${table} where id = any($1) order by id`, [objects]);
      for (const r of rows) trail.push(`  ${table} ${JSON.stringify(r)}`);
      for (const objectId of objects) {
        if (m[2] === 'sales') for (const sale of ledger?.sales.values() ?? []) if (sale.id === objectId) add(saleItem(sale));
        if (m[2] === 'returns') for (const r of ledger?.returns.values() ?? []) if (r.id === objectId) add(returnItem(r));
      }
    }
  }

  for (const eventId of new Set(violation.match(/\bevt_[0-9a-f]{32}\b/g) ?? [])) {
    const [row] = await q('select id, empresa_id, tipo, recurso, orden, posicion, ocurrido_at from subscriptions.eventos where id = $1', [
      eventId,
    ]);
    const deliveries = await q(
      `select suscripcion_id, estado, intentos, proximo_intento_at, tomada_hasta, primer_fallo_at, entregada_at from subscriptions.entregas where evento_id = $1`,
      [eventId],
    );
    const attempts = await q(
      `select intento, status, error, duracion_ms, created_at from subscriptions.intentos where evento_id = $1 order by id desc limit 5`,
      [eventId],
    );
    trail.push(`subscriptions.eventos ${row ? JSON.stringify(row) : `${eventId}: no row`}`);
    // Received from the stream but not in the log yet: it waits for an earlier event still unsettled.
    if (!row)
      for (const r of await q(
        'select id, empresa_id, tipo, recurso, orden, recibido_at from subscriptions.eventos_recibidos where id = $1',
        [eventId],
      ))
        trail.push(`  subscriptions.eventos_recibidos ${JSON.stringify(r)}`);
    for (const d of deliveries) trail.push(`  subscriptions.entregas ${JSON.stringify(d)}`);
    for (const a of attempts) trail.push(`  subscriptions.intentos ${JSON.stringify(a)}`);
    const producer = String(row?.tipo ?? '').split('.')[0] ?? '';
    add({
      kind: 'event',
      label: `event ${eventId}${row ? ` (${row.tipo})` : ''}`,
      times: times([['logged', dateMs(row?.ocurrido_at)]]),
      strings: [eventId],
      numbers: [],
      services: [
        'subscriptions',
        ...((
          { sale: ['sales'], return: ['returns'], package: ['packages'], stock: ['inventory'], product: ['inventory'] } as Record<
            string,
            ServiceName[]
          >
        )[producer] ?? []),
      ],
    });
  }

  for (const m of violation.matchAll(/\breservation ([\w:-]+)/g)) {
    const [row] = await q('select clave, estado, origen, created_at, updated_at from inventory.reservas where clave = $1', [m[1]]);
    if (row) trail.push(`inventory.reservas ${JSON.stringify(row)}`);
    add({
      kind: 'reservation',
      label: `reservation ${m[1]}`,
      times: times([['reserved', dateMs(row?.created_at)]]),
      strings: [m[1]!],
      numbers: [],
      services: SERVICES_OF.reservation,
    });
  }
  for (const m of violation.matchAll(/\bproducto(?:\/bodega)? (\d+)(?:\/| bodega )(\d+)/g))
    add({
      kind: 'stock',
      label: `stock of producto ${m[1]} in bodega ${m[2]}`,
      times: [],
      // Too small and too common to look for in the logs.
      strings: [],
      numbers: [],
      services: SERVICES_OF.stock,
    });

  // Where each written item's event went: the producer's outbox, then the partner's log.
  for (const item of items.filter((i) => ['sale', 'return', 'package'].includes(i.kind))) {
    const id = item.numbers[0];
    const company = item.empresa ? input.companies[item.empresa] : undefined;
    const [schema, outboxWhere, outboxParam] =
      item.kind === 'sale'
        ? ['sales', `payload->>'id_venta' = $1`, String(id)]
        : item.kind === 'return'
          ? ['returns', `payload->>'id_devolucion' = $1`, String(id)]
          : ['packages', `payload->'paquetes' @> $1::jsonb`, JSON.stringify([{ wr: item.strings[0] }])];
    const outbox = await q(
      `select id, subject, created_at, published_at from ${schema}.outbox where ${outboxWhere} order by created_at, orden limit 10`,
      [outboxParam],
    );
    trail.push(
      outbox.length > 0
        ? `${item.label}: ${schema}.outbox`
        : `${item.label}: no row of ${schema}.outbox is about it (never written, or published and removed)`,
    );
    const outboxIds = outbox.map((o) => o.id as string | undefined).filter((o): o is string => typeof o === 'string');
    // The partner event an outbox row becomes has an id derived from the row's (its first one: index 0).
    const expected = new Map(outboxIds.map((o) => [o, partnerEventId(o, 0)]));
    const found = new Map(
      (outboxIds.length > 0
        ? await q('select id, tipo, ocurrido_at, posicion from subscriptions.eventos where id = any($1)', [[...expected.values()]])
        : []
      ).map((e) => [e.id as string, e]),
    );
    for (const o of outbox) {
      const partner = expected.get(o.id as string);
      const logged = partner ? found.get(partner) : undefined;
      trail.push(`  ${JSON.stringify(o)}`);
      if (partner)
        trail.push(`    → partner event ${partner}: ${logged ? `in the log, ${JSON.stringify(logged)}` : 'NOT in the partner log'}`);
    }
    item.strings.push(...outboxIds, ...expected.values());
    if (id === undefined) continue;
    const logged = await q(
      item.kind === 'package'
        ? `select id, tipo, ocurrido_at, posicion from subscriptions.eventos where tipo = 'package.imported' and data->'items' @> $1::jsonb ${company ? 'and empresa_id = $2' : ''} order by posicion limit 10`
        : `select id, tipo, ocurrido_at, posicion from subscriptions.eventos where tipo like $1 and data->>'id' = $2 ${company ? 'and empresa_id = $3' : ''} order by posicion limit 10`,
      [...(item.kind === 'package' ? [JSON.stringify([{ id }])] : [`${item.kind}.%`, String(id)]), ...(company ? [company.id] : [])],
    );
    trail.push(logged.length > 0 ? `  subscriptions.eventos (the partner's log)` : `  subscriptions.eventos: no event of it`);
    for (const e of logged) trail.push(`    ${JSON.stringify(e)}`);
  }
  return items;
}

function returnItem(r: ReturnRecord): Item {
  return {
    kind: 'return',
    label: `return ${r.id ?? '?'} (${r.empresa}:${r.referencia}) of sale ${r.id_venta}`,
    empresa: r.empresa,
    times: [
      ...(r.sentAt !== undefined ? [{ what: 'sent', at: r.sentAt }] : []),
      ...(r.ackedAt !== undefined ? [{ what: 'acknowledged', at: r.ackedAt }] : []),
    ],
    strings: [r.referencia],
    numbers: [...(r.id !== undefined ? [r.id] : []), r.id_venta],
    services: SERVICES_OF.return,
  };
}

function packageItem(p: PackageRecord): Item {
  return {
    kind: 'package',
    label: `package ${p.id ?? '?'} (${p.empresa}:${p.wr})`,
    empresa: p.empresa,
    times: [
      ...(p.sentAt !== undefined ? [{ what: 'sent', at: p.sentAt }] : []),
      ...(p.ackedAt !== undefined ? [{ what: 'acknowledged', at: p.ackedAt }] : []),
    ],
    strings: [p.wr],
    numbers: p.id !== undefined ? [p.id] : [],
    services: SERVICES_OF.package,
  };
}

function readServiceLogs(dir: string): LogLine[] {
  if (!existsSync(dir)) return [];
  const lines: LogLine[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.log'))) {
    const source = file.replace(/\.log$/, '');
    const service = source.replace(/-\d+$/, '');
    for (const text of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (!text) continue;
      let parsed: { time?: string; level?: string; msg?: string; err?: { message?: string } } | undefined;
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        parsed = undefined;
      }
      const at = parsed?.time ? Date.parse(parsed.time) : undefined;
      lines.push({
        source,
        service,
        ...(at !== undefined && Number.isFinite(at) ? { at } : {}),
        level: parsed?.level ?? 'text',
        message: parsed ? `${parsed.msg ?? ''}${parsed.err?.message ? ` — ${parsed.err.message}` : ''}` : text,
        text,
      });
    }
  }
  return lines.sort((x, y) => (x.at ?? 0) - (y.at ?? 0));
}

/** nats-server (`[pid] 2026/11/27 17:50:01.123456 [WRN] …`, local time) and Postgres (`2026-11-27 17:50:01.123 UTC [pid] LOG: …`). */
function readServerLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  const source = path.basename(path.dirname(file)).startsWith('pg') ? path.basename(path.dirname(file)) : path.basename(file, '.log');
  const out: LogLine[] = [];
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    const nats = /^\[\d+\] (\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})\d* \[(\w+)\] (.*)$/.exec(text);
    if (nats) {
      const [, y, mo, d, h, mi, s, ms, level, message] = nats;
      if (level === 'INF' && !/leader|lost|stepping down|catchup|quorum|no responders|restore|truncat|reset/i.test(message!)) continue;
      const at = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(ms)).getTime();
      out.push({ source, service: 'nats', at, level: level!, message: message!, text });
      continue;
    }
    const pg = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) (\w+) \[\d+\] (\w+): +(.*)$/.exec(text);
    if (pg) {
      const [, day, time, zone, level, message] = pg;
      if (!['ERROR', 'FATAL', 'PANIC', 'WARNING'].includes(level!)) continue;
      const at = Date.parse(`${day}T${time}${zone === 'UTC' || zone === 'GMT' ? 'Z' : ''}`);
      out.push({ source, service: 'postgres', at, level: level!, message: message!, text });
    }
  }
  return out;
}

/** Lines naming an item (its references, event ids, or its id under an id-like key). */
function namedLines(logs: LogLine[], items: Item[]): string[] {
  const strings = items.flatMap((i) => i.strings).filter((s) => s.length >= 4);
  const numbers = items.flatMap((i) => i.numbers);
  if (strings.length === 0 && numbers.length === 0) return [];
  const parts = [
    ...strings.map(escapeRegex),
    ...(numbers.length > 0
      ? [`"(?:id|[a-z]+Id|id_[a-z_]+|exportacion|venta|devolucion|paquete)":\\s?(?:${numbers.join('|')})(?![\\d.])`]
      : []),
  ];
  const re = new RegExp(parts.join('|'));
  return logs.filter((l) => re.test(l.text)).map((l) => `${l.source}: ${trim(l.text)}`);
}

function group(lines: LogLine[]): LogGroup[] {
  const groups = new Map<string, LogGroup>();
  for (const l of lines) {
    // Numbers of four digits or more (ports, ids) told apart, not those inside a uuid or a hex id.
    const message = l.message.replace(/(?<![\w-])\d{4,}(?![\w-])/g, 'N').slice(0, 200);
    const key = `${l.source}|${l.level}|${message}`;
    const g = groups.get(key);
    if (g) {
      g.count++;
      g.last = l.at ?? g.last;
    } else
      groups.set(key, { source: l.source, level: l.level, message, count: 1, first: l.at ?? 0, last: l.at ?? 0, sample: trim(l.text) });
  }
  return [...groups.values()].sort((x, y) => x.first - y.first);
}

/** A log line without its stack (the first frame kept) and cut at 600 characters. */
function trim(text: string): string {
  const noStack = text.replace(/("stack":"[^"\\]*(?:\\.[^"\\]*)*?)\\n[^"]*(")/, '$1 …$2');
  return noStack.length > 600 ? `${noStack.slice(0, 600)} …` : noStack;
}

/** The id the subscriptions service gives the `index`-th partner event of a source event (its outbox id), as `partnerEventId` there. */
const partnerEventId = (sourceId: string, index: number) =>
  `evt_${createHash('sha256').update(`${sourceId}:${index}`).digest('hex').slice(0, 32)}`;
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const dateMs = (value: unknown) => (value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : undefined);
const iso = (ms: number | undefined) => (ms === undefined ? '?' : new Date(ms).toISOString().slice(11, 23));
const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${(Math.abs(ms) / 1000).toFixed(1)} s`;

/**
 * The evidence as text. `brief`: for stdout (three violations per check, five groups of log lines,
 * ten named lines); otherwise everything gathered, for the report file.
 */
export function formatEvidence(evidence: ViolationEvidence[], options: { brief?: boolean } = {}): string {
  const brief = options.brief ?? false;
  const out: string[] = [];
  const perCheck = new Map<string, number>();
  for (const e of evidence) {
    const n = (perCheck.get(e.check) ?? 0) + 1;
    perCheck.set(e.check, n);
    if (n === 1) out.push(`✗ ${e.check}`);
    if (brief && n > 3) {
      if (n === 4) out.push('    … (more in the report file)');
      continue;
    }
    out.push(`  • ${e.violation}`);
    const anchor = e.window?.anchor;
    const rel = (at: number) => (anchor === undefined ? '' : ` (${signed(at - anchor)})`);
    for (const item of e.items)
      out.push(`      ${item.label}: ${item.times.map((t) => `${t.what} ${iso(t.at)}`).join(', ') || 'no time known'}`);
    if (e.items.length === 0) out.push('      (no item of the ledger or the databases recognised in it)');
    if (e.window) {
      out.push(
        `      faults from ${iso(e.window.from)} to ${iso(e.window.to)} (a minute before the first item's time${anchor !== undefined ? `, ${iso(anchor)}` : ''}, to half a minute after the last):`,
      );
      if (e.faults.length === 0) out.push('        none');
      for (const f of e.faults)
        out.push(
          `        ${iso(f.at)}${rel(f.at)} ${f.kind === 'fault' ? '⚡' : f.kind === 'note' ? '·' : '↺'} ${f.what}${f.until ? ` (until ${iso(f.until)})` : ''}`,
        );
    }
    if (!brief || e.trail.length <= 12) {
      if (e.trail.length > 0) out.push('      in the databases:');
      for (const t of e.trail) out.push(`        ${t}`);
    } else out.push(`      in the databases: ${e.trail.length} rows (in the report file)`);
    const named = brief ? e.named.slice(0, 10) : e.named.slice(0, 200);
    if (named.length > 0) out.push(`      service log lines naming them (${e.named.length}):`);
    for (const l of named) out.push(`        ${l}`);
    const groups = brief ? e.window_lines.slice(0, 5) : e.window_lines;
    if (e.window)
      out.push(
        `      warnings and errors of ${[...new Set(e.items.flatMap((i) => i.services))].join(', ') || 'every service'} in the window: ${e.window_lines.length} kinds`,
      );
    for (const g of groups) {
      out.push(
        `        ${g.count}× ${g.source} ${g.level} "${g.message}" ${iso(g.first)}${rel(g.first)}${g.count > 1 ? ` … ${iso(g.last)}${rel(g.last)}` : ''}`,
      );
      if (!brief) out.push(`          ${g.sample}`);
    }
    if (brief && e.window_lines.length > groups.length)
      out.push(`        … ${e.window_lines.length - groups.length} more kinds in the report file`);
    if (!brief && e.server_lines.length > 0) {
      out.push('      nats-server and Postgres in the window:');
      for (const g of e.server_lines)
        out.push(
          `        ${g.count}× ${g.source} ${g.level} "${g.message}" ${iso(g.first)}${rel(g.first)}${g.count > 1 ? ` … ${iso(g.last)}` : ''}`,
        );
    }
  }
  return out.join('\n');
}

/** Every step of the phase with its time, for the report file. */
export function formatFaults(faults: FaultRecord[], started: number): string {
  return faults
    .map(
      (f) =>
        `${iso(f.at)} [${((f.at - started) / 1000).toFixed(1).padStart(6)} s] ${f.kind.padEnd(8)} ${f.what}${f.until ? ` (until ${iso(f.until)}, ${((f.until - f.at) / 1000).toFixed(1)} s)` : ''}`,
    )
    .join('\n');
}

/** The last lines of the logs of the replicas a problem names (`sales#3 died by itself …`). */
export function problemTails(problems: string[], logDir: string, lines = 15): string[] {
  const out: string[] = [];
  for (const label of new Set(problems.flatMap((p) => p.match(/\b[a-z-]+#\d+/g) ?? []))) {
    const file = path.join(logDir, `${label.replace('#', '-')}.log`);
    if (!existsSync(file)) continue;
    out.push(`${label} (its last ${lines} lines):`);
    for (const l of readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines)) out.push(`  ${trim(l)}`);
  }
  return out;
}
