import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { seedFixture } from '@erp/back-office';
import { Bus } from '@erp/bus';
import { STREAM_FAMILIES, schemaOf, streamName, type ServiceName } from '@erp/contracts';
import { createLogger } from '@erp/runtime';
import { ALL_SERVICES, Cluster } from './support/cluster';
import { companiesOf, reliabilityFixture } from './support/fixture';
import { Load } from './support/load';
import { CHAOS_PREFIX, PrivateInfra, privateInfraMissing } from './support/private-infra';
import { sleep } from './support/wait';

/** The load and the window of one run (`npm run capacity` reads them from its environment). */
export interface CapacitySettings {
  /** Concurrent clients of the mixed load; 0 measures the system at rest. */
  workers: number;
  warmupSeconds: number;
  /** The measured window. */
  seconds: number;
  /** DB_POOL_MAX of each service. */
  pool: number;
}

/** What a run measured over its window, and the report `npm run capacity` prints of it. */
export interface CapacityReport {
  /** The report, in markdown, as docs/capacity.md quotes it. */
  text: string;
  seconds: number;
  /** Requests the load sent in the window, and the answers by status. */
  requests: number;
  answers: Record<string, number>;
  /** Each schema's Postgres backends: CPU, pg_stat_statements' execution time and calls, most backends at once. */
  schemas: Array<{ schema: string; cpuSeconds: number; execMs: number; calls: number; peakBackends: number }>;
  nats: { cpuSeconds: number; msgsIn: number; msgsOut: number; events: number };
  redis: { cpuSeconds: number; commands: number; usedMemoryBytes: number };
  /** Each service's process (`sales#1`). */
  processes: Array<{ label: string; cpuSeconds: number; rssBytes: number }>;
}

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const PAGE_BYTES = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096;

/** CPU seconds (user + system) of a process, with its parent, its children's CPU once waited for, and its resident memory. */
interface ProcStat {
  ppid: number;
  cpu: number;
  childrenCpu: number;
  rssBytes: number;
}
function procStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces), from field 3 (state) on.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (field: number) => Number(fields[field - 3]);
    return { ppid: n(4), cpu: (n(14) + n(15)) / TICKS, childrenCpu: (n(16) + n(17)) / TICKS, rssBytes: n(24) * PAGE_BYTES };
  } catch {
    return undefined;
  }
}
function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => procStat(pid)?.ppid === parent);
}

/** The database of each Postgres process, from pg_stat_activity ("background" for the server's own). */
async function databasesOfProcesses(monitor: pg.Client): Promise<Map<number, string>> {
  const { rows } = await monitor.query<{ pid: number; datname: string | null }>(
    'select pid, datname from pg_stat_activity where pid <> pg_backend_pid()',
  );
  return new Map(rows.map((r) => [r.pid, r.datname ?? 'background']));
}

/**
 * What each schema costs Postgres under the reliability suite's mixed load, and what the load
 * costs NATS and Redis, for docs/capacity.md. Starts Postgres (with pg_stat_statements), NATS and
 * Redis of its own on loopback (the shared servers are never touched) and every service as its own
 * process, one replica each, each schema in a database of its own on the one server, so every
 * Postgres process is attributed to a schema by its database. After a warm-up it samples, over
 * the measured window, the CPU of every Postgres process (/proc), pg_stat_statements by database,
 * the connections per database, and the CPU, memory and traffic of nats-server, redis-server and
 * each service. Everything it started is stopped before it returns. Needs the tools
 * `privateInfraMissing` checks for.
 */
export async function measureCapacity(settings: CapacitySettings, log: (line: string) => void = () => undefined): Promise<CapacityReport> {
  const loadBefore = os.loadavg();
  const infra = await PrivateInfra.start({
    natsNodes: 1,
    salesServer: false,
    postgresSettings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=top', 'max_connections=200'],
  });
  const server = infra.postgres;
  const monitor = new pg.Client({ connectionString: server.url(), application_name: 'capacity-monitor' });
  await monitor.connect();
  await monitor.query('create extension pg_stat_statements');
  const databaseOf = (service: ServiceName) => `erp_${schemaOf(service)}`;
  for (const service of ALL_SERVICES) await monitor.query(`create database ${databaseOf(service)}`);
  const postgresVersion = (await monitor.query<{ v: string }>('select version() as v')).rows[0]!.v;

  const cluster = new Cluster(
    {
      NATS_URL: infra.natsUrl,
      JETSTREAM_REPLICAS: '1',
      REDIS_URL: infra.redisUrl,
      SUBJECT_PREFIX: CHAOS_PREFIX,
      REDIS_KEY_PREFIX: CHAOS_PREFIX,
      DB_POOL_MAX: String(settings.pool),
      REQUEST_TIMEOUT_MS: '8000',
      SHUTDOWN_TIMEOUT_MS: '20000',
      RATE_LIMIT_STANDARD: '100000000',
      RATE_LIMIT_DATE_FILTERED: '100000000',
    },
    Object.fromEntries(ALL_SERVICES.map((service) => [service, { DATABASE_URL: server.url(databaseOf(service)) }])),
  );
  let admin: Bus | undefined;
  let load: Load | undefined;
  try {
    await cluster.migrate();
    // The stream and every durable exist now: the services may start together.
    // As Kubernetes keeps a pod's place filled: a replica that gives up starting (a dependency
    // slow to answer on a loaded machine) is started again, and said.
    const replicas = await Promise.all(
      ALL_SERVICES.map((service) =>
        cluster.startRetrying(service, {
          attempts: 3,
          onFailedStart: (label, reason) => log(`${label} exited while starting (${reason}); started again`),
        }),
      ),
    );
    const gateway = replicas.find((r) => r.name === 'gateway')!;
    admin = await Bus.connect({
      servers: infra.natsUrl,
      prefix: CHAOS_PREFIX,
      name: 'capacity-admin',
      logger: createLogger('capacity-admin', 'silent'),
      requestTimeoutMs: 30_000,
    });
    const companies = companiesOf(await seedFixture(admin, reliabilityFixture()));
    load = new Load({
      gateways: () => [gateway.url!],
      companies,
      workers: settings.workers,
      thinkMs: 20,
      runId: 'capacity',
      updates: true,
      admin,
      attempts: 4,
    });
    log(`services started, fixture seeded; ${settings.workers} clients, warm-up ${settings.warmupSeconds} s`);
    load.start();
    await sleep(settings.warmupSeconds * 1000);

    // The window: everything below is a difference between its end and its start.
    const postmaster = Number(readFileSync(path.join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const natsPid = infra.nats[0]!.child!.pid!;
    const redisInfo = (section: string) =>
      Object.fromEntries(
        execFileSync('redis-cli', ['-p', String(infra.redisPort), 'info', section], { encoding: 'utf8' })
          .split('\r\n')
          .filter((l) => l.includes(':'))
          .map((l) => l.split(':', 2) as [string, string]),
      );
    const redisPid = Number(redisInfo('server').process_id);
    const varz = async () => (await (await fetch(`http://127.0.0.1:${infra.nats[0]!.monitorPort}/varz`)).json()) as Record<string, number>;
    const streamState = async () => {
      const jsz = await infra.nats[0]!.jsz();
      const streams = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []) as unknown as Array<{
        name: string;
        state: { messages: number; bytes: number };
      }>;
      // The events and intake streams together (the export stores' streams are files, not events).
      const names = STREAM_FAMILIES.map((family) => streamName(CHAOS_PREFIX, family));
      const carrying = streams.filter((s) => names.includes(s.name));
      return carrying.reduce((sum, s) => ({ messages: sum.messages + s.state.messages, bytes: sum.bytes + s.state.bytes }), {
        messages: 0,
        bytes: 0,
      });
    };
    const sentBefore = new Map(load.tally.sent);
    const answeredBefore = load.tally.snapshot();
    const first = new Map<number, number>();
    const last = new Map<number, number>();
    const owner = new Map<number, string>();
    const peakConnections: Record<string, number> = {};
    const sample = async () => {
      const databases = await databasesOfProcesses(monitor);
      const connections: Record<string, number> = {};
      for (const pid of childrenOf(postmaster)) {
        const stat = procStat(pid);
        if (!stat) continue;
        if (!first.has(pid)) first.set(pid, last.size === 0 ? stat.cpu : 0);
        last.set(pid, stat.cpu);
        const database = databases.get(pid) ?? owner.get(pid) ?? 'background';
        owner.set(pid, database);
        if (database !== 'background') connections[database] = (connections[database] ?? 0) + 1;
      }
      for (const [database, n] of Object.entries(connections)) peakConnections[database] = Math.max(peakConnections[database] ?? 0, n);
    };
    const postmasterBefore = procStat(postmaster)!;
    const processesBefore = new Map([...cluster.replicas].map((r) => [r.label, procStat(r.child.pid!)!.cpu]));
    const natsBefore = { stat: procStat(natsPid)!, varz: await varz(), stream: await streamState() };
    const redisBefore = { stat: procStat(redisPid)!, commands: Number(redisInfo('stats').total_commands_processed) };
    await monitor.query('select pg_stat_statements_reset()');
    await sample();
    const windowStart = Date.now();
    log(`measuring for ${settings.seconds} s`);
    while (Date.now() - windowStart < settings.seconds * 1000) {
      await sleep(1_000);
      await sample();
    }
    const seconds = (Date.now() - windowStart) / 1000;
    const postmasterAfter = procStat(postmaster)!;
    const statements = (
      await monitor.query<{ datname: string; calls: string; exec_ms: number; plan_ms: number }>(
        `select d.datname, sum(s.calls)::text as calls, sum(s.total_exec_time)::float8 as exec_ms, sum(s.total_plan_time)::float8 as plan_ms
           from pg_stat_statements s join pg_database d on d.oid = s.dbid group by 1 order by 3 desc`,
      )
    ).rows;
    const top = (
      await monitor.query<{ datname: string; calls: string; total_ms: number; mean_ms: number; query: string }>(
        `select d.datname, s.calls::text, s.total_exec_time::float8 as total_ms, s.mean_exec_time::float8 as mean_ms, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 110) as query
           from pg_stat_statements s join pg_database d on d.oid = s.dbid order by s.total_exec_time desc limit 12`,
      )
    ).rows;
    const frequent = (
      await monitor.query<{ datname: string; calls: string; query: string }>(
        `select distinct on (d.datname) d.datname, s.calls::text, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 110) as query
           from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname like 'erp\\_%' order by d.datname, s.calls desc`,
      )
    ).rows;
    const natsAfter = { stat: procStat(natsPid)!, varz: await varz(), stream: await streamState() };
    const redisAfter = {
      stat: procStat(redisPid)!,
      commands: Number(redisInfo('stats').total_commands_processed),
      memory: Number(redisInfo('memory').used_memory),
      keys: redisInfo('keyspace').db0 ?? 'db0:keys=0',
    };
    const processesCpu = [...cluster.replicas].map((r) => ({
      label: r.label,
      cpu: procStat(r.child.pid!)!.cpu - (processesBefore.get(r.label) ?? 0),
      rss: procStat(r.child.pid!)!.rssBytes,
    }));
    const sent = [...load.tally.sent].map(([op, n]) => [op, n - (sentBefore.get(op) ?? 0)] as const).filter(([, n]) => n > 0);
    const answered = load.tally.since(answeredBefore);
    await load.stop();
    load = undefined;

    // Postgres CPU per database over the window.
    const cpuByDatabase: Record<string, number> = {};
    for (const [pid, end] of last) {
      const database = owner.get(pid)!;
      cpuByDatabase[database] = (cpuByDatabase[database] ?? 0) + (end - (first.get(pid) ?? 0));
    }
    const exited = postmasterAfter.childrenCpu - postmasterBefore.childrenCpu + (postmasterAfter.cpu - postmasterBefore.cpu);
    const schemaCpu = Object.entries(cpuByDatabase).filter(([d]) => d.startsWith('erp_'));
    const schemaTotal = schemaCpu.reduce((a, [, c]) => a + c, 0);
    const requests = sent.reduce((a, [, n]) => a + n, 0);
    const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)} %` : '–');
    /** Milliseconds of CPU per request of `cpu` seconds ('–' without requests: a run at rest). */
    const perRequest = (cpu: number) => (requests > 0 ? ((1000 * cpu) / requests).toFixed(2) : '–');
    const execTotal = statements.reduce((a, s) => a + s.exec_ms, 0);

    const out: string[] = [];
    const line = (text = '') => out.push(text);
    line(`# npm run capacity (${new Date().toISOString()})`);
    line();
    line(
      `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load average before ${loadBefore.map((l) => l.toFixed(1)).join(' ')}; Node ${process.version}; ${postgresVersion.split(' on ')[0]}`,
    );
    line(
      `Load: ${settings.workers} clients (think 20 ms), one replica per service, DB_POOL_MAX ${settings.pool}; window ${seconds.toFixed(0)} s after ${settings.warmupSeconds} s of warm-up`,
    );
    line(`Requests: ${requests} in the window, ${(requests / seconds).toFixed(1)}/s; answers ${JSON.stringify(answered)}`);
    line(`By operation: ${sent.map(([op, n]) => `${op} ${n}`).join(', ')}`);
    line();
    line(
      '| schema (database) | Postgres CPU, s | share of the schemas | CPU per request, ms | pg_stat_statements exec, ms | share | calls | peak backends |',
    );
    line('|---|---|---|---|---|---|---|---|');
    for (const [database, cpu] of schemaCpu.sort((x, y) => y[1] - x[1])) {
      const st = statements.find((s) => s.datname === database);
      line(
        `| ${database.replace(/^erp_/, '')} | ${cpu.toFixed(2)} | ${pct(cpu, schemaTotal)} | ${perRequest(cpu)} | ${(st?.exec_ms ?? 0).toFixed(0)} | ${pct(st?.exec_ms ?? 0, execTotal)} | ${st?.calls ?? 0} | ${peakConnections[database] ?? 0} |`,
      );
    }
    line(
      `| (server: background processes ${(cpuByDatabase.background ?? 0).toFixed(2)} s; postmaster and processes that ended ${exited.toFixed(2)} s; monitor ${(cpuByDatabase.postgres ?? 0).toFixed(2)} s) | | | | | | | |`,
    );
    line();
    line(
      `Postgres: ${(schemaTotal / seconds).toFixed(2)} cores for the schemas' backends (${perRequest(schemaTotal)} ms of CPU per request)`,
    );
    line();
    line('Top statements by execution time:');
    for (const t of top)
      line(
        `- ${t.datname.replace(/^erp_/, '')}: ${t.total_ms.toFixed(0)} ms in ${t.calls} calls (${t.mean_ms.toFixed(2)} ms each): ${t.query}`,
      );
    line();
    line('Most frequent statement of each schema:');
    for (const f of frequent)
      line(`- ${f.datname.replace(/^erp_/, '')}: ${f.calls} calls (${(Number(f.calls) / seconds).toFixed(0)}/s): ${f.query}`);
    line();
    const natsCpu = natsAfter.stat.cpu - natsBefore.stat.cpu;
    const inMsgs = natsAfter.varz.in_msgs! - natsBefore.varz.in_msgs!;
    const outMsgs = natsAfter.varz.out_msgs! - natsBefore.varz.out_msgs!;
    const inBytes = natsAfter.varz.in_bytes! - natsBefore.varz.in_bytes!;
    const events = natsAfter.stream.messages - natsBefore.stream.messages;
    const eventBytes = natsAfter.stream.bytes - natsBefore.stream.bytes;
    line(
      `NATS: ${natsCpu.toFixed(2)} s CPU (${(natsCpu / seconds).toFixed(3)} cores, ${perRequest(natsCpu)} ms per request), RSS ${(natsAfter.stat.rssBytes / 2 ** 20).toFixed(0)} MiB; ${(inMsgs / seconds).toFixed(0)} msgs/s in (${(inBytes / seconds / 1024).toFixed(0)} KiB/s), ${(outMsgs / seconds).toFixed(0)} msgs/s out; events stored ${events} (${(events / seconds).toFixed(1)}/s, ${events > 0 ? (eventBytes / events).toFixed(0) : 0} bytes each)`,
    );
    const redisCpu = redisAfter.stat.cpu - redisBefore.stat.cpu;
    line(
      `Redis: ${redisCpu.toFixed(2)} s CPU (${(redisCpu / seconds).toFixed(3)} cores), ${((redisAfter.commands - redisBefore.commands) / seconds).toFixed(0)} commands/s, used_memory ${(redisAfter.memory / 2 ** 20).toFixed(1)} MiB, ${redisAfter.keys}`,
    );
    line();
    line('| process | CPU, s | cores | CPU per request, ms | RSS, MiB |');
    line('|---|---|---|---|---|');
    for (const p of processesCpu.sort((x, y) => y.cpu - x.cpu))
      line(
        `| ${p.label} | ${p.cpu.toFixed(2)} | ${(p.cpu / seconds).toFixed(3)} | ${perRequest(p.cpu)} | ${(p.rss / 2 ** 20).toFixed(0)} |`,
      );
    return {
      text: out.join('\n'),
      seconds,
      requests,
      answers: answered,
      schemas: schemaCpu.map(([database, cpu]) => {
        const st = statements.find((s) => s.datname === database);
        return {
          schema: database.replace(/^erp_/, ''),
          cpuSeconds: cpu,
          execMs: st?.exec_ms ?? 0,
          calls: Number(st?.calls ?? 0),
          peakBackends: peakConnections[database] ?? 0,
        };
      }),
      nats: { cpuSeconds: natsCpu, msgsIn: inMsgs, msgsOut: outMsgs, events },
      redis: { cpuSeconds: redisCpu, commands: redisAfter.commands - redisBefore.commands, usedMemoryBytes: redisAfter.memory },
      processes: processesCpu.map((p) => ({ label: p.label, cpuSeconds: p.cpu, rssBytes: p.rss })),
    };
  } finally {
    await load?.stop();
    await admin?.drain().catch(() => undefined);
    await cluster.stop().catch(() => undefined);
    await monitor.end().catch(() => undefined);
    await infra.stop();
  }
}

/**
 * `npm run capacity`: one run, its report on stdout, progress on stderr; bounded in time.
 *
 * Environment: CAPACITY_WORKERS (concurrent clients, 8), CAPACITY_WARMUP_SECONDS (15),
 * CAPACITY_SECONDS (measured window, 60), CAPACITY_POOL (DB_POOL_MAX of each service, 5).
 */
async function main(): Promise<number> {
  const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  const settings: CapacitySettings = {
    workers: setting('CAPACITY_WORKERS', 8),
    warmupSeconds: setting('CAPACITY_WARMUP_SECONDS', 15),
    seconds: setting('CAPACITY_SECONDS', 60),
    pool: setting('CAPACITY_POOL', 5),
  };
  const missing = privateInfraMissing();
  if (missing.length > 0) {
    console.error(`npm run capacity starts its own Postgres, NATS and Redis, and needs: ${missing.join(', ')}`);
    return 2;
  }
  const deadline = setTimeout(
    () => {
      console.error('deadline reached: stopping');
      process.exit(3);
    },
    (settings.warmupSeconds + settings.seconds + 300) * 1000,
  );
  deadline.unref();
  const started = Date.now();
  const log = (line: string) => console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  console.log((await measureCapacity(settings, log)).text);
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`capacity failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    },
  );
}
