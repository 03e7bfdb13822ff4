import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { createDb } from '@erp/db';
import { API_BASE } from '@erp/contracts';
import { ventaExportRows } from '../../../services/sales/src/db/venta-list.repository';
import type { SalesDb } from '../../../services/sales/src/db/tables';
import { withPeakRss, type LoadResult } from './load';
import type { BenchProcess } from './processes';

export interface ExportMeasure {
  objetos: number;
  bytes: number;
  /** From the POST's answer to the first read that saw `completada`, with nothing else running. */
  seconds: number;
  /** The same rows' JSON, built by the same SQL, streamed by psql to /dev/null. */
  baselineSeconds: number;
  /** Of each service, during the export alone. */
  rss: Record<string, number>;
  /**
   * A read scenario's requests per second alone, then during a second export (from its POST on),
   * and how long that export took with the reads beside it.
   */
  reads?: { name: string; alone: number; during: number; exportSeconds: number };
}

/**
 * The export scenario: every sale of the company exported (`POST /exports`, then `GET
 * /exports/{id}` every 100 ms until `completada`) with nothing else running, the services' RSS
 * sampled meanwhile; then, when given, a read scenario alone and again during a second export;
 * then the physical limit on this machine: the SQL the sales service runs for the file's lines,
 * with no batches, no gzip and no object store, copied by psql to /dev/null.
 */
export async function measureExport(o: {
  gatewayUrl: string;
  apiKey: string;
  databaseUrl: string;
  empresaId: number;
  /** The services, whose largest resident set during the export is measured. */
  processes: readonly BenchProcess[];
  /** A read scenario run alone and again during an export. */
  reads?: { name: string; load: () => Promise<LoadResult> };
}): Promise<ExportMeasure> {
  const headers = { authorization: `Bearer ${o.apiKey}`, 'content-type': 'application/json' };
  const exportOnce = async (beside?: () => void) => {
    const started = performance.now();
    const created = await fetch(`${o.gatewayUrl}${API_BASE}/exports`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ recurso: 'sales', filtros: {} }),
    });
    if (created.status !== 202) throw new Error(`POST /exports answered ${created.status}: ${await created.text()}`);
    const { id } = ((await created.json()) as { data: { id: number } }).data;
    beside?.();
    for (;;) {
      const res = await fetch(`${o.gatewayUrl}${API_BASE}/exports/${id}`, { headers });
      const { data } = (await res.json()) as { data: { estado: string; objetos: number; bytes: number; error: string | null } };
      if (data.estado === 'completada') return { objetos: data.objetos, bytes: data.bytes, seconds: (performance.now() - started) / 1000 };
      if (data.estado !== 'en_cola' && data.estado !== 'procesando') throw new Error(`the export ended ${data.estado}: ${data.error}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const { value, rss } = await withPeakRss(o.processes, () => exportOnce());
  let reads: ExportMeasure['reads'];
  if (o.reads) {
    const alone = await o.reads.load();
    let during: Promise<LoadResult> | undefined;
    const second = await exportOnce(() => (during = o.reads!.load()));
    reads = { name: o.reads.name, alone: alone.rps, during: (await during!).rps, exportSeconds: second.seconds };
  }
  return { ...value, baselineSeconds: await psqlToDevNull(o.databaseUrl, o.empresaId), rss, ...(reads ? { reads } : {}) };
}

/** Seconds psql takes to copy every sale's JSON of the company (the export's SQL, by id) to /dev/null. */
async function psqlToDevNull(databaseUrl: string, empresaId: number): Promise<number> {
  const db = createDb<SalesDb>({ connectionString: databaseUrl, max: 1, applicationName: 'bench-export-baseline' }).withSchema('sales');
  const compiled = ventaExportRows(db, empresaId, {}).orderBy('v.id').compile();
  await db.destroy();
  // COPY takes no parameters: the statement's are inlined (numbers and text only).
  const text = compiled.sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const value = compiled.parameters[Number(n) - 1];
    return typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`;
  });
  const devNull = openSync('/dev/null', 'w');
  try {
    const started = performance.now();
    const child = spawn('psql', [databaseUrl, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `copy (select json from (${text}) e) to stdout`], {
      stdio: ['ignore', devNull, 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
    if (code !== 0) throw new Error(`psql failed: ${stderr.slice(0, 500)}`);
    return (performance.now() - started) / 1000;
  } finally {
    closeSync(devNull);
  }
}

/** The scenario's lines for the console and BENCHMARKS.md. */
export function exportLines(m: ExportMeasure): string[] {
  const rate = m.objetos / m.seconds;
  const limit = m.objetos / m.baselineSeconds;
  const mb = (n: number) => (n / 2 ** 20).toFixed(0);
  return [
    `export of ${m.objetos.toLocaleString('en-US')} sales (POST /exports to completada): ${m.seconds.toFixed(1)} s, ` +
      `${Math.round(rate).toLocaleString('en-US')} sales/s (target ≥ 20,000: ${rate >= 20_000 ? 'met' : '**missed**'}), file ${mb(m.bytes)} MB gzip`,
    `the same rows' JSON by psql to /dev/null: ${m.baselineSeconds.toFixed(1)} s, ${Math.round(limit).toLocaleString('en-US')} sales/s; ` +
      `the export runs at ${((100 * rate) / limit).toFixed(0)} % of it`,
    ...(m.reads
      ? [
          `${m.reads.name}: ${Math.round(m.reads.alone)} req/s alone, ${Math.round(m.reads.during)} during another export ` +
            `(${((100 * m.reads.during) / m.reads.alone).toFixed(0)} %; target ≥ 70 %: ${m.reads.during >= 0.7 * m.reads.alone ? 'met' : '**missed**'}), ` +
            `which took ${m.reads.exportSeconds.toFixed(1)} s beside them`,
        ]
      : []),
    `RSS max during the export alone: ${Object.entries(m.rss)
      .map(([name, bytes]) => `${name} ${mb(bytes)} MB`)
      .join(' · ')}`,
  ];
}
