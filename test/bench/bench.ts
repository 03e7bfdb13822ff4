import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { API_BASE } from '@erp/contracts';
import { missingDependencies } from '@erp/runtime';
import { benchDatabaseUrl } from './data/plan';
import {
  cpuBetween,
  cpuSeconds,
  handlerTimes,
  runLoad,
  scrapeHandlerTotals,
  withPeakRss,
  type LoadRequest,
  type LoadResult,
} from './run/load';
import { buildServices, startBaseline, startStack, type Baseline, type Stack } from './run/processes';
import { explainScenarios } from './run/explain';
import { quiesce, quietLine } from './run/quiesce';
import { exportLines, measureExport, type ExportMeasure } from './run/export';
import { summarizeProfiles, type ProfileSummary, type Window } from './run/profile';
import { markdown, printScenario, rssVerdict, writeResults, type Measured, type RunInfo } from './run/report';
import { measuredSoFar, pendingScenarios, readFacts, scenarios, type AnswerBytes, type Pending, type Scenario } from './run/scenarios';

/**
 * `npm run bench`: starts every service against the bench database (see `npm run bench:data`),
 * drives each scenario with autocannon on loopback (warm-up, then a bounded run), runs each read
 * scenario and the sale writes against the baseline too, prints one table per scenario and rewrites the results
 * section of BENCHMARKS.md. Options: --duration S (10), --warmup S (2), --connections N (10),
 * --only TEXT (scenarios whose name contains it), --no-write, --log-level L (warn), --port N (18080),
 * --ops-ports N (first of the services' ops ports, 19464), --baseline-port N (18090), --prefix NAME (of the
 * NATS subjects and Redis keys, `bench`: another for a run beside another one on the same servers).
 * `--explain` starts nothing: it prints the plan of every statement of each read scenario.
 * `--profile` records a CPU profile of every process and prints where their time went.
 */
/** Longest wait for the previous scenario's asynchronous work before the next starts. */
const SETTLE_BEFORE_MS = 300_000;
const ROOT = path.resolve(__dirname, '../..');

interface Options {
  duration: number;
  warmup: number;
  connections: number;
  only?: string;
  write: boolean;
  explain: boolean;
  profile: boolean;
  logLevel: string;
  gatewayPort: number;
  opsPortBase: number;
  baselinePort: number;
  prefix: string;
}

function parseOptions(argv: readonly string[]): Options {
  const o: Options = {
    duration: 10,
    warmup: 2,
    connections: 10,
    write: true,
    explain: false,
    profile: false,
    logLevel: 'warn',
    gatewayPort: 18080,
    opsPortBase: 19464,
    baselinePort: 18090,
    prefix: 'bench',
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const int = (min: number, max: number) => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} must be an integer from ${min} to ${max}`);
      return n;
    };
    if (flag === '--duration') o.duration = int(1, 300);
    else if (flag === '--warmup') o.warmup = int(0, 60);
    else if (flag === '--connections') o.connections = int(1, 200);
    else if (flag === '--only') o.only = value();
    else if (flag === '--no-write') o.write = false;
    else if (flag === '--explain') o.explain = true;
    else if (flag === '--profile') o.profile = true;
    else if (flag === '--log-level') o.logLevel = value();
    else if (flag === '--port') o.gatewayPort = int(1, 65535);
    else if (flag === '--ops-ports') o.opsPortBase = int(1, 65000);
    else if (flag === '--baseline-port') o.baselinePort = int(1, 65535);
    else if (flag === '--prefix') o.prefix = value();
    else throw new Error(`unknown option ${flag}`);
  }
  return o;
}

async function probe(gatewayUrl: string, apiKey: string, r: LoadRequest): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(`${gatewayUrl}${r.path}`, {
    method: r.method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...r.headers },
    ...(r.body !== undefined ? { body: r.body } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

/** Bytes of one GET's body as sent with each `Accept-Encoding` (node:http: fetch would decode it). */
async function answerBytes(gatewayUrl: string, apiKey: string, path: string): Promise<AnswerBytes> {
  const size = (encoding: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        `${gatewayUrl}${path}`,
        { headers: { authorization: `Bearer ${apiKey}`, 'accept-encoding': encoding } },
        (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => resolve(bytes));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  return { identity: await size('identity'), gzip: await size('gzip'), br: await size('br') };
}

/** 404 "route not found" or 405: the gateway has no such route yet. */
function routeMissing(p: { status: number; body: string }): boolean {
  return p.status === 405 || (p.status === 404 && p.body.includes('Ruta no encontrada'));
}

async function describeRun(databaseUrl: string, o: Options): Promise<RunInfo> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const count = async (table: string) =>
      Number((await client.query(`select count(*) as n from ${table}`)).rows[0].n).toLocaleString('en-US');
    const pgVersion = (await client.query<{ v: string }>(`select current_setting('server_version') as v`)).rows[0]!.v;
    const shared = (await client.query<{ v: string }>(`select current_setting('shared_buffers') as v`)).rows[0]!.v;
    const git = (args: string[]) => {
      try {
        return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      } catch {
        return '?';
      }
    };
    return {
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
      commit: git(['rev-parse', '--short', 'HEAD']),
      command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
      machine: `${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, load average before the run ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, PostgreSQL ${pgVersion} (shared_buffers ${shared}); load generator, services, NATS, Redis and Postgres share the machine`,
      data: `${await count('sales.ventas')} sales, ${await count('sales.venta_detalles')} sale lines, ${await count('inventory.productos')} products, ${await count('inventory.inventarios')} stock rows, ${await count('packages.paquetes')} packages (all companies)`,
      settings: `${o.connections} connections, ${o.duration} s per run after ${o.warmup} s of warm-up, services built and run as the images run them, LOG_LEVEL=${o.logLevel}, no OTLP endpoint (nothing instrumented), hourly quota lifted`,
    };
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const databaseUrl = benchDatabaseUrl();
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (o.explain) {
    const facts = await readFacts(databaseUrl);
    const list = scenarios(facts, 'explain', databaseUrl).filter((s) => !o.only || s.name.includes(o.only));
    for (const e of await explainScenarios(databaseUrl, facts.empresaId, list)) {
      console.log(`\n=== ${e.scenario}: GET ${e.path}`);
      for (const st of e.statements) console.log(`\n${st.sql}\n-- parameters: ${JSON.stringify(st.parameters)}\n${st.plan}`);
    }
    return;
  }
  const missing = await missingDependencies({ databaseUrl, natsUrl, redisUrl });
  if (missing.length > 0) throw new Error(missing.join('\n'));
  const facts = await readFacts(databaseUrl);
  const info = await describeRun(databaseUrl, o);
  const runTag = Date.now().toString(36);
  const all = scenarios(facts, runTag, databaseUrl).filter((s) => !o.only || s.name.includes(o.only));
  const durationText = `${o.duration} s`;
  const EXPORT_SCENARIO = 'export of every sale';
  const READ_DURING_EXPORT = 'GET /sales?per_page=100 (first page)';
  const runExport = !o.only || EXPORT_SCENARIO.includes(o.only);

  // Never runs away: a watchdog ends everything if the runs take far longer than planned.
  const budgetMs =
    (180 +
      all.length * (2 * (o.duration + o.warmup) + 15 + SETTLE_BEFORE_MS / 1000) +
      all.filter((s) => s.settle).length * 300 +
      (runExport ? 900 : 0)) *
    1000;
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'erp-bench-'));
  console.log(`logs of the services: ${logDir}`);
  let stack: Stack | undefined;
  let baseline: Baseline | undefined;
  const windows: Window[] = [];
  const timed = async <T>(run: () => Promise<T>): Promise<T> => {
    const from = Date.now();
    try {
      return await run();
    } finally {
      windows.push([from, Date.now()]);
    }
  };
  const stopAll = async () => {
    await Promise.all([stack?.stop(), baseline?.stop()]);
  };
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${budgetMs / 1000} s; stopping`);
    void stopAll().finally(() => process.exit(1));
  }, budgetMs);
  watchdog.unref();
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));

  try {
    console.log('building the services…');
    await buildServices();
    console.log('starting the services…');
    const profileDir = o.profile ? path.join(logDir, 'profiles') : undefined;
    stack = await startStack({
      databaseUrl,
      natsUrl,
      redisUrl,
      gatewayPort: o.gatewayPort,
      opsPortBase: o.opsPortBase,
      prefix: o.prefix,
      logLevel: o.logLevel,
      logDir,
      ...(profileDir ? { profileDir } : {}),
    });
    baseline = await startBaseline({
      databaseUrl,
      empresaId: facts.empresaId,
      port: o.baselinePort,
      logDir,
      ...(profileDir ? { profileDir } : {}),
    });
    const headers = { authorization: `Bearer ${facts.apiKey}`, 'content-type': 'application/json' };

    const pending: Pending[] = [];
    for (const p of pendingScenarios(facts)) {
      const answer = await probe(stack.gatewayUrl, facts.apiKey, p.probe);
      pending.push({ ...p, reason: routeMissing(answer) ? 'its route has not landed in the gateway' : p.reason });
    }

    const measured: Measured[] = [];
    const load = (url: string, s: Scenario, connections: number, seconds: number, amount?: number): Promise<LoadResult> =>
      runLoad({ url, headers, connections, duration: seconds, next: s.next, ...(amount !== undefined ? { amount } : {}) });
    // Each scenario is measured alone: the previous one's events, deliveries and sales are done first.
    const settleBefore = async (name: string) => {
      const quiet = await quiesce({ databaseUrl, natsUrl, prefix: o.prefix, timeoutMs: SETTLE_BEFORE_MS });
      console.log(`\n${name}: ${quietLine(quiet)}`);
      return quiet;
    };
    for (const s of all) {
      const quiet = await settleBefore(s.name);
      const connections = s.connections ?? o.connections;
      const root = s.absolute ? stack.gatewayUrl : `${stack.gatewayUrl}${API_BASE}`;
      const absolute = (r: LoadRequest): LoadRequest => ({ ...r, path: s.absolute ? r.path : `${API_BASE}${r.path}` });
      await s.prepare?.({ send: (r) => probe(stack!.gatewayUrl, facts.apiKey, absolute(r)), apiRoot: root, headers });
      const sample = s.next();
      const first = await probe(stack.gatewayUrl, facts.apiKey, {
        ...sample,
        path: s.absolute ? sample.path : `${API_BASE}${sample.path}`,
      });
      if (routeMissing(first)) {
        pending.push({ name: s.name, reason: 'its route has not landed in the gateway', probe: sample });
        continue;
      }
      if (s.status !== undefined ? first.status !== s.status : first.status >= 300) {
        measured.push({ scenario: s, connections, quiet, failure: `first request answered ${first.status}: ${first.body.slice(0, 200)}` });
        printScenario(measured.at(-1)!, durationText);
        continue;
      }
      if (o.warmup > 0 && s.amount === undefined) await load(root, s, connections, o.warmup);
      const before = await scrapeHandlerTotals(stack.opsPorts);
      const startedAt = new Date();
      const cpuBefore = await cpuSeconds(stack.processes);
      const { value: full, rss } = await withPeakRss(stack.processes, async () => {
        const result = await timed(() => load(root, s, connections, o.duration, s.amount));
        const cpuAnswered = await cpuSeconds(stack!.processes);
        if (s.settle) console.log(`${s.name}: ${result.requests} answered, waiting for them to be processed…`);
        return { result, cpuAnswered, settled: s.settle ? await s.settle(startedAt) : undefined };
      });
      const cpu = {
        answering: cpuBetween(cpuBefore, full.cpuAnswered),
        ...(s.settle ? { settling: cpuBetween(full.cpuAnswered, await cpuSeconds(stack.processes)) } : {}),
      };
      const handlers = handlerTimes(before, await scrapeHandlerTotals(stack.opsPorts));
      const reference = measured.find((m) => m.scenario.name === s.reference)?.result?.full;
      const bytes = s.measureBytes ? await answerBytes(stack.gatewayUrl, facts.apiKey, absolute(sample).path) : undefined;
      let base: LoadResult | undefined;
      if (s.baseline) {
        const baselineUrl = baseline.url;
        if (o.warmup > 0 && s.amount === undefined) await load(baselineUrl, s, connections, o.warmup);
        base = await timed(() => load(baselineUrl, s, connections, o.duration, s.amount));
      }
      measuredSoFar.set(s.name, { full: full.result, rss, cpu, handlers });
      measured.push({
        scenario: s,
        connections,
        quiet,
        result: {
          full: full.result,
          rss,
          cpu,
          handlers,
          ...(base ? { baseline: base } : {}),
          ...(full.settled ? { settled: full.settled } : {}),
          ...(reference ? { reference } : {}),
          ...(bytes ? { bytes } : {}),
        },
      });
      printScenario(measured.at(-1)!, s.amount !== undefined ? `${s.amount.toLocaleString('en-US')} requests` : durationText);
    }
    let exported: ExportMeasure | undefined;
    if (runExport) {
      await settleBefore(EXPORT_SCENARIO);
      console.log(`\n${EXPORT_SCENARIO}…`);
      // The reads measured beside it: a page of the exported resource, from the service that writes the file.
      const read = scenarios(facts, runTag, databaseUrl).find((s) => s.name === READ_DURING_EXPORT)!;
      exported = await timed(() =>
        measureExport({
          gatewayUrl: stack!.gatewayUrl,
          apiKey: facts.apiKey,
          databaseUrl,
          empresaId: facts.empresaId,
          processes: stack!.processes,
          reads: { name: read.name, load: () => load(`${stack!.gatewayUrl}${API_BASE}`, read, o.connections, o.duration) },
        }),
      );
      for (const line of exportLines(exported)) console.log(`  ${line.replace(/\*\*/g, '')}`);
    }
    for (const p of pending) console.log(`\n${p.name}: not yet measurable (${p.reason})`);
    console.log(`\n${rssVerdict(measured).replace(/\*\*/g, '')}`);

    if (o.write && !o.profile) {
      const exportSection = exported
        ? `\n\n#### ${EXPORT_SCENARIO}\n\n${exportLines(exported)
            .map((l) => `- ${l}`)
            .join('\n')}`
        : '';
      await writeResults(path.join(ROOT, 'BENCHMARKS.md'), markdown(info, measured, pending, durationText) + exportSection);
      console.log('\nBENCHMARKS.md updated');
    }
  } finally {
    clearTimeout(watchdog);
    await stopAll();
  }
  if (o.profile) {
    const exitedAt = Object.fromEntries(
      [...(stack?.processes ?? []), ...(baseline ? [baseline.process] : [])].map((p) => [p.name, p.exitedAt]),
    );
    printProfiles(await summarizeProfiles(path.join(logDir, 'profiles'), windows, exitedAt), path.join(logDir, 'profiles'));
  }
}

function printProfiles(profiles: ProfileSummary[], dir: string): void {
  const ms = (n: number) => `${Math.round(n).toLocaleString('en-US')} ms`;
  console.log(`\nCPU profiles of the measured runs only (the files, whole, open in Chrome DevTools): ${dir}`);
  for (const p of profiles) {
    const busy = p.totalMs - (p.byOrigin.find((o) => o.origin === '(idle)')?.ms ?? 0);
    console.log(`\n${p.process}: ${ms(busy)} busy of ${ms(p.totalMs)}`);
    console.log(
      `  by origin: ${p.byOrigin
        .filter((o) => o.origin !== '(idle)')
        .map((o) => `${o.origin} ${ms(o.ms)}`)
        .join(' · ')}`,
    );
    for (const f of p.topFunctions) console.log(`  ${ms(f.ms).padStart(9)}  ${f.name}`);
  }
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
