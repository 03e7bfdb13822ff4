import { readFile, writeFile } from 'node:fs/promises';
import type { LoadResult } from './load';
import { quietLine, type Quiet } from './quiesce';
import { RSS_LIMIT, type Pending, type Scenario, type ScenarioResult } from './scenarios';

export interface RunInfo {
  date: string;
  commit: string;
  command: string;
  machine: string;
  data: string;
  settings: string;
}

export interface Measured {
  scenario: Scenario;
  connections: number;
  /** How long the previous scenario's asynchronous work took to settle before this one started. */
  quiet?: Quiet;
  result?: ScenarioResult;
  /** Why it was not measured (its first request failed). */
  failure?: string;
}

const MB = 1024 * 1024;
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ms = (n: number) => fmt(n, n < 10 ? 1 : 0);
const errors = (r: LoadResult) => {
  const codes = Object.entries(r.statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, n]) => `${code}×${fmt(n)}`);
  return `${fmt(r.errors)} / ${fmt(r.non2xx)}${codes.length > 0 ? ` (${codes.join(', ')})` : ''}`;
};

export function targetLines(m: Measured): Array<{ label: string; met: boolean }> {
  if (!m.result) return [];
  return m.scenario.targets.map((t) => ({ label: t.label, met: t.met(m.result!) }));
}

function rssLine(rss: Record<string, number>): string {
  return Object.entries(rss)
    .map(([name, bytes]) => `${name} ${bytes > 0 ? fmt(bytes / MB) : '?'} MB`)
    .join(' · ');
}

/** The services' CPU time in one phase of a run, the busiest first, and its total per request. */
function cpuPhase(seconds: Record<string, number>, requests: number): string {
  const total = Object.values(seconds).reduce((a, b) => a + b, 0);
  const each = Object.entries(seconds)
    .filter(([, s]) => s >= 0.05)
    .sort(([, a], [, b]) => b - a)
    .map(([name, s]) => `${name} ${fmt(s, 1)}`)
    .join(' · ');
  return `${fmt(total, 1)} s, ${ms((1000 * total) / Math.max(requests, 1))} ms a request (${each || 'none over 0.05 s'})`;
}

function cpuLine(m: Measured): string | undefined {
  const r = m.result;
  if (!r) return undefined;
  const settling = r.cpu.settling ? `; then until settled: ${cpuPhase(r.cpu.settling, r.full.requests)}` : '';
  return `services' CPU while answering: ${cpuPhase(r.cpu.answering, r.full.requests)}${settling}`;
}

function handlersLine(m: Measured): string {
  const hs = m.result?.handlers ?? [];
  return hs.length === 0 ? '–' : hs.map((h) => `${h.subject} ${ms(h.meanMs)} ms (${fmt(h.count)}×)`).join(' · ');
}

function row(label: string, r: LoadResult): string[] {
  return [label, fmt(r.rps), ms(r.p50), ms(r.p99), errors(r)];
}

/** The rows of one scenario's table: full path, baseline, and their ratio when there is one. */
function rows(m: Measured): string[][] {
  const r = m.result!;
  const out = [row('full path', r.full)];
  if (r.baseline) {
    out.push(row('baseline (same SQL, node:http + pg)', r.baseline));
    out.push([
      'full / baseline',
      r.baseline.rps > 0 ? `${fmt((100 * r.full.rps) / r.baseline.rps)} %` : '–',
      r.baseline.p50 > 0 ? `× ${fmt(r.full.p50 / r.baseline.p50, 1)}` : '–',
      r.baseline.p99 > 0 ? `× ${fmt(r.full.p99 / r.baseline.p99, 1)}` : '–',
      '',
    ]);
  }
  if (r.reference) {
    out.push(row(`reference (${m.scenario.reference})`, r.reference));
    out.push(['full / reference', r.reference.rps > 0 ? `× ${fmt(r.full.rps / r.reference.rps, 1)}` : '–', '', '', '']);
  }
  return out;
}

function bytesLine(m: Measured): string | undefined {
  const b = m.result?.bytes;
  if (!b) return undefined;
  const share = (n: number) => (b.identity > 0 ? ` (${fmt((100 * n) / b.identity)} %)` : '');
  return `bytes of one answer: ${fmt(b.identity)} uncompressed, ${fmt(b.gzip)} with gzip${share(b.gzip)}, ${fmt(b.br)} with br${share(b.br)}`;
}

const HEAD = ['', 'req/s', 'p50 ms', 'p99 ms', 'errors / non-2xx'];

function salesLine(m: Measured): string | undefined {
  const per = m.scenario.salesPerRequest;
  if (!per || !m.result) return undefined;
  return `sales written: ${fmt(m.result.full.rps * per)}/s (${fmt(per)} per request)`;
}

function settledLine(m: Measured): string | undefined {
  const st = m.result?.settled;
  if (!st) return undefined;
  if (st.what !== undefined) {
    const lag = st.lagMs
      ? `; sale.created behind its sale: p50 ${fmt(st.lagMs.p50)} ms, p99 ${fmt(st.lagMs.p99)} ms, max ${fmt(st.lagMs.max)} ms` +
        ` (the dispatcher's part, from the event log to the receiver: p50 ${fmt(st.lagMs.dispatchP50)} ms, p99 ${fmt(st.lagMs.dispatchP99)} ms)`
      : '';
    const drain = st.drain
      ? `; a replay of the run's ${fmt(st.drain.events)} events drained in ${fmt(st.drain.seconds, 1)} s (${fmt(st.drain.rate)}/s)`
      : '';
    return `${st.what}: ${fmt(st.processed)} in ${fmt(st.seconds, 1)} s (${fmt(st.rate)}/s)${lag}${drain}; still owed ${fmt(st.pending)}`;
  }
  return `processed into sales: ${fmt(st.processed)} in ${fmt(st.seconds, 1)} s from the first received (${fmt(st.rate)}/s); failed or ignored ${fmt(st.failed)}; still waiting ${fmt(st.pending)}`;
}

export function printScenario(m: Measured, duration: string): void {
  console.log(`\n${m.scenario.name}  (${m.connections} connections, ${duration})`);
  if (!m.result) return void console.log(`  not measured: ${m.failure}`);
  const table = [HEAD, ...rows(m)];
  const widths = HEAD.map((_, c) => Math.max(...table.map((r) => (r[c] ?? '').length)));
  for (const r of table) console.log(`  ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}`);
  console.log(`  RSS max: ${rssLine(m.result.rss)}`);
  console.log(`  ${cpuLine(m)}`);
  console.log(`  NATS handlers (mean): ${handlersLine(m)}`);
  const sales = salesLine(m);
  if (sales) console.log(`  ${sales}`);
  const settled = settledLine(m);
  if (settled) console.log(`  ${settled}`);
  const bytes = bytesLine(m);
  if (bytes) console.log(`  ${bytes}`);
  const targets = targetLines(m);
  if (targets.length > 0) console.log(`  targets: ${targets.map((t) => `${t.label}: ${t.met ? 'met' : 'MISSED'}`).join('; ')}`);
}

/** The largest RSS of each service over every run, and the scenario it was seen in. */
function rssPeaks(measured: readonly Measured[]): Array<{ service: string; bytes: number; scenario: string }> {
  const peaks = new Map<string, { service: string; bytes: number; scenario: string }>();
  for (const m of measured) {
    for (const [service, bytes] of Object.entries(m.result?.rss ?? {})) {
      if (bytes > (peaks.get(service)?.bytes ?? -1)) peaks.set(service, { service, bytes, scenario: m.scenario.name });
    }
  }
  return [...peaks.values()];
}

/** The target "every service under 200 MB RSS", over the whole run. */
export function rssVerdict(measured: readonly Measured[]): string {
  const peaks = rssPeaks(measured);
  const over = peaks.filter((p) => p.bytes >= RSS_LIMIT);
  const list = peaks.map((p) => `${p.service} ${fmt(p.bytes / MB)} MB`).join(' · ');
  const where = over.map((p) => `${p.service} during ${p.scenario}`).join('; ');
  return `every service < 200 MB RSS: ${over.length === 0 ? 'met' : `**missed** (${where})`}. Largest RSS of each service over the run: ${list}.`;
}

export function markdown(info: RunInfo, measured: readonly Measured[], pending: readonly Pending[], duration: string): string {
  const lines: string[] = [];
  lines.push(`Run of ${info.date} on commit \`${info.commit}\`: \`${info.command}\``, '');
  lines.push(`- Machine: ${info.machine}`, `- Data: ${info.data}`, `- Settings: ${info.settings}`, '');
  lines.push('| scenario | req/s | p50 ms | p99 ms | full / baseline req/s | targets |', '|---|---:|---:|---:|---:|---|');
  for (const m of measured) {
    if (!m.result) {
      lines.push(`| ${m.scenario.name} | – | – | – | – | not measured: ${m.failure} |`);
      continue;
    }
    const r = m.result;
    const ratio = r.baseline && r.baseline.rps > 0 ? `${fmt((100 * r.full.rps) / r.baseline.rps)} %` : '–';
    const targets =
      targetLines(m)
        .map((t) => `${t.label}: ${t.met ? 'met' : '**missed**'}`)
        .join('; ') || 'none in the issue';
    lines.push(`| ${m.scenario.name} | ${fmt(r.full.rps)} | ${ms(r.full.p50)} | ${ms(r.full.p99)} | ${ratio} | ${targets} |`);
  }
  for (const p of pending) lines.push(`| ${p.name} | – | – | – | – | not yet measurable: ${p.reason} |`);
  lines.push('', `Target over all runs: ${rssVerdict(measured)}`);
  for (const m of measured) {
    if (!m.result) continue;
    const runLength = m.scenario.amount !== undefined ? `${fmt(m.scenario.amount)} requests` : duration;
    lines.push('', `#### ${m.scenario.name}`, '', `${m.connections} connections, ${runLength}.`, '');
    if (m.quiet) lines.splice(-1, 0, '', `Before it: ${quietLine(m.quiet)}.`);
    lines.push(`| ${HEAD.join(' | ')} |`, '|---|---:|---:|---:|---:|');
    for (const r of rows(m)) lines.push(`| ${r.join(' | ')} |`);
    lines.push(
      '',
      `RSS max during the run: ${rssLine(m.result.rss)}.`,
      '',
      `The ${cpuLine(m)}.`,
      '',
      `Mean handler time per NATS subject during the run: ${handlersLine(m)}.`,
    );
    const sales = salesLine(m);
    if (sales) lines.push('', `${sales[0]!.toUpperCase()}${sales.slice(1)}.`);
    const settled = settledLine(m);
    if (settled) lines.push('', `After the run: ${settled}.`);
    const bytes = bytesLine(m);
    if (bytes) lines.push('', `${bytes[0]!.toUpperCase()}${bytes.slice(1)}.`);
  }
  return lines.join('\n');
}

export const RESULTS_START = '<!-- bench:results:start -->';
export const RESULTS_END = '<!-- bench:results:end -->';

/** Replaces the generated part of BENCHMARKS.md, keeping the notes written around it. */
export async function writeResults(file: string, section: string): Promise<void> {
  const current = await readFile(file, 'utf8').catch(() => `# Benchmarks\n\n${RESULTS_START}\n${RESULTS_END}\n`);
  const start = current.indexOf(RESULTS_START);
  const end = current.indexOf(RESULTS_END);
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start + RESULTS_START.length)}\n${section}\n${current.slice(end)}`
      : `${current.trimEnd()}\n\n${RESULTS_START}\n${section}\n${RESULTS_END}\n`;
  await writeFile(file, next);
}
