import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { seedFixture, type DatabaseUrls } from '@erp/back-office';
import { Bus } from '@erp/bus';
import { createLogger } from '@erp/runtime';
import { apiRoutes } from '../../services/gateway/src/http/routes';
import { Cluster } from './support/cluster';
import { formatEvidence, formatFaults, gatherEvidence, problemTails } from './support/evidence';
import { repeatSeed } from './support/faults';
import { companiesOf, reliabilityFixture, type Company, type CompanyRef } from './support/fixture';
import { failoverScenario } from './support/failover';
import { formatFuzzReport, fuzzApi } from './support/fuzz';
import { HaPostgres } from './support/ha-postgres';
import { formatInvariants } from './support/invariants';
import { EventReceiver } from './support/partner-events';
import { isolationSweep } from './support/isolation';
import { CHAOS_PREFIX, PrivateInfra, privateInfraMissing } from './support/private-infra';
import { Rotation, crashScenario, overloadScenario, rollingRestartScenario, type ScenarioResult } from './support/scenarios';
import { shopsScenario } from './support/shop-scenario';
import { caFile } from '../support/shops';

/**
 * `npm run test:chaos`: the full reliability run against Postgres, NATS and Redis of its own
 * (free loopback ports, a temp directory; the shared servers on the default ports are never
 * touched), every service as its own process. Phases: tenant isolation sweep, input fuzzing,
 * crash faults under load, rolling restart under load, overload soak, shops reconciled through
 * dropped webhooks and webhook-ingest down; and, asked for by name only, the primary's loss under
 * load (`failover`: every schema on a Patroni cluster of a primary and a synchronous standby behind
 * HAProxy, its Debian packages installed when missing; it cannot run with the crash phase, whose
 * Postgres faults are the single servers'). Prints the figures and
 * exits 1 when any guarantee was broken. Bounded: a deadline stops it whatever happens.
 *
 * CHAOS_REPEAT=N runs the crash phase N times, each on servers and services of its own (fresh
 * Postgres, NATS, Redis, schemas and fixture: one repeat's damage cannot fail the next), the
 * first with the other phases asked for, the others with the crash phase alone. A repeat that
 * breaks a guarantee does not stop the others; the exit code is 1 if any broke one. Each repeat's
 * seed comes from CHAOS_SEED (the base seed, drawn and printed when not given): repeat 1 uses it
 * as it is, repeat k one derived from it, and the seed printed for a repeat, given as CHAOS_SEED
 * to a run of one repeat, replays it: the same order of faults, pauses (half to one and a half
 * times CHAOS_PAUSE_MS), times down, partition and quorum-loss lengths, replicas killed in the
 * middle of a NATS, Redis or Postgres fault, export pace and load mix (the machine's timing still
 * varies). Every step is recorded with its time, every write of the load with the time it was
 * acknowledged. For each failed check the run writes its evidence (the ids its violations name,
 * the faults from a minute before their items were acknowledged to half a minute after, the rows
 * on their way through outboxes and the partner's log, the log lines of the services involved
 * naming them, and those services' warnings and errors in that window) to report.txt in a
 * directory kept with the failed repeats' service and server logs, printed at the end, and a
 * summary of it on stdout.
 *
 * Environment: CHAOS_PHASES (isolation,fuzz,crash,rolling,overload,shops; failover on request), CHAOS_REPEAT (1), CHAOS_SEED,
 * CHAOS_FUZZ_RUNS (cases per endpoint, 1000), CHAOS_FUZZ_SEED, CHAOS_SOAK_SECONDS (90),
 * CHAOS_OVERLOAD_CLIENTS (300), CHAOS_PAUSE_MS (between faults, on average; 4000),
 * CHAOS_DEADLINE_MINUTES (30, and 10 more per extra repeat), CHAOS_KEEP (1: keep a failed
 * repeat's server data), CHAOS_SHOPS_INTERVAL_MS (webhook-ingest's reconciliation interval in the
 * shops phase, 20000), CHAOS_SHOPS_DOWN_SECONDS (webhook-ingest down in it, 120),
 * CHAOS_FAILOVER_ROUNDS (primaries killed in the failover phase, alternately each node; 2).
 */
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const repeat = Math.max(1, Math.floor(env('CHAOS_REPEAT', 1)));
const settings = {
  repeat,
  seed: env('CHAOS_SEED', Date.now() % 1_000_000_000),
  fuzzRuns: env('CHAOS_FUZZ_RUNS', 1000),
  fuzzSeed: env('CHAOS_FUZZ_SEED', Date.now() % 1_000_000),
  soakSeconds: env('CHAOS_SOAK_SECONDS', 90),
  overloadClients: env('CHAOS_OVERLOAD_CLIENTS', 300),
  shopsIntervalMs: env('CHAOS_SHOPS_INTERVAL_MS', 20_000),
  shopsDownSeconds: env('CHAOS_SHOPS_DOWN_SECONDS', 120),
  failoverRounds: env('CHAOS_FAILOVER_ROUNDS', 2),
  pauseMs: env('CHAOS_PAUSE_MS', 4_000),
  deadlineMinutes: env('CHAOS_DEADLINE_MINUTES', 30 + 10 * (repeat - 1)),
  phases: new Set((process.env.CHAOS_PHASES ?? 'isolation,fuzz,crash,rolling,overload,shops').split(',').map((p) => p.trim())),
};

/** The services' bus request timeout in the run: the gateway answers 504 past it. */
const REQUEST_TIMEOUT_MS = 8_000;

const started = Date.now();
let current = '';
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s]${current} ${line}`);
/** The run's directory, kept: report.txt, and the logs of each repeat that failed. */
const runDir = path.join(os.tmpdir(), `erp-chaos-run-${new Date(started).toISOString().replace(/[:.]/g, '-')}`);
const reportFile = path.join(runDir, 'report.txt');
const report = (text: string) => appendFileSync(reportFile, `${text}\n`);

interface RepeatOutcome {
  k: number;
  seed: number;
  minutes: number;
  failures: string[];
  /** One line: requests, checks and items. */
  summary: string;
}

async function main(): Promise<number> {
  const missing = privateInfraMissing();
  if (missing.length > 0) {
    console.error(`The chaos run starts its own Postgres, NATS and Redis, and needs: ${missing.join(', ')}`);
    return 2;
  }
  if (settings.phases.has('failover') && settings.phases.has('crash')) {
    console.error(
      'The failover phase runs every schema on the HA cluster, the crash phase restarts the single servers: ask for them in separate runs',
    );
    return 2;
  }
  mkdirSync(runDir, { recursive: true });
  const deadline = setTimeout(() => {
    console.error(`deadline of ${settings.deadlineMinutes} minutes reached: stopping (what was gathered is in ${reportFile})`);
    report(`\ndeadline of ${settings.deadlineMinutes} minutes reached during${current || ' the run'}: stopped`);
    process.exit(3);
  }, settings.deadlineMinutes * 60_000);
  deadline.unref();

  const repeats = settings.phases.has('crash') ? settings.repeat : 1;
  log(`settings ${JSON.stringify({ ...settings, phases: [...settings.phases] })}`);
  if (settings.repeat > 1 && !settings.phases.has('crash'))
    log('CHAOS_REPEAT repeats the crash phase, which CHAOS_PHASES leaves out: one run');
  if (repeats > 1)
    log(
      `the crash phase ${repeats} times, base seed ${settings.seed} (CHAOS_SEED=${settings.seed} CHAOS_REPEAT=${repeats} replays the whole run)`,
    );
  writeFileSync(
    reportFile,
    `chaos run of ${new Date(started).toISOString()}, commit ${commit()}\nsettings ${JSON.stringify({ ...settings, phases: [...settings.phases] })}\n`,
  );

  const outcomes: RepeatOutcome[] = [];
  for (let k = 1; k <= repeats; k++) {
    const seed = repeatSeed(settings.seed, k);
    current = repeats > 1 ? ` r${k}` : '';
    const phases = k === 1 ? settings.phases : new Set(['crash']);
    const header = `repeat ${k} of ${repeats}, seed ${seed} (alone: CHAOS_SEED=${seed} CHAOS_PHASES=crash), phases ${[...phases].join(',')}`;
    if (repeats > 1) console.log(`\n=== ${header}`);
    report(`\n=== ${header}`);
    const begun = Date.now();
    const outcome = await runOnce(k, seed, phases).catch((err: unknown): Omit<RepeatOutcome, 'k' | 'seed' | 'minutes'> => ({
      failures: [`the repeat stopped: ${(err as Error).stack ?? String(err)}`],
      summary: 'stopped',
    }));
    outcomes.push({ k, seed, minutes: (Date.now() - begun) / 60_000, ...outcome });
    report(
      outcome.failures.length > 0
        ? `repeat ${k}: FAILED\n${outcome.failures.map((f) => `  - ${f}`).join('\n')}`
        : `repeat ${k}: every guarantee held`,
    );
  }
  current = '';

  const failed = outcomes.filter((o) => o.failures.length > 0);
  const lines = outcomes.map(
    (o) =>
      `  repeat ${o.k} (seed ${o.seed}, ${o.minutes.toFixed(1)} min): ${o.failures.length > 0 ? `FAILED: ${o.failures.join('; ')}` : 'every guarantee held'} — ${o.summary}`,
  );
  const closing = [
    `\n== ${repeats > 1 ? `${repeats} repeats of the crash phase, base seed ${settings.seed}` : `seed ${settings.seed}`}, ${((Date.now() - started) / 60_000).toFixed(1)} minutes in all`,
    ...lines,
    failed.length > 0
      ? `\nFAILED: ${failed.length} of ${outcomes.length} broke a guarantee; evidence in ${reportFile}`
      : `\nevery guarantee held${repeats > 1 ? ` in all ${repeats} repeats` : ''} (report: ${reportFile})`,
  ].join('\n');
  console.log(closing);
  report(closing);
  return failed.length > 0 ? 1 : 0;
}

/** One run on servers and services of its own: the phases asked for, the crash phase with `seed`. */
async function runOnce(k: number, seed: number, phases: Set<string>): Promise<Omit<RepeatOutcome, 'k' | 'seed' | 'minutes'>> {
  const begun = Date.now();
  // The failover phase keeps every schema on the HA cluster (its read-write endpoint): no second server.
  const infra = await PrivateInfra.start({ natsNodes: 3, salesServer: !phases.has('failover') });
  const ha = phases.has('failover') ? await HaPostgres.start({ dir: path.join(infra.dir, 'ha') }) : undefined;
  if (ha)
    log(
      `HA Postgres: Patroni nodes ${ha.nodes.map((n) => `${n.name} :${n.pgPort}`).join(', ')}, read-write endpoint :${ha.rwPort}, read-only :${ha.roPort}`,
    );
  log(
    `private Postgres :${infra.postgres.port} and :${infra.salesPostgres.port} (sales), NATS cluster ${infra.nats.map((n) => `${n.name} :${n.port}`).join(', ')}, Redis :${infra.redisPort} in ${infra.dir}`,
  );
  const logDir = path.join(infra.dir, 'logs');
  mkdirSync(logDir);
  const results: ScenarioResult[] = [];
  const failures: string[] = [];
  let summary = 'stopped before its checks';
  let cluster: Cluster | undefined;
  let databases: DatabaseUrls | undefined;
  let companies: Record<CompanyRef, Company> | undefined;
  let admin: Bus | undefined;
  let receiver: EventReceiver | undefined;
  try {
    if (ha) {
      // Every schema behind the read-write endpoint (the HA cluster made the database).
      databases = { databaseUrl: ha.rwUrl('erp'), databaseUrls: { sales: ha.rwUrl('erp') } };
    } else {
      for (const server of [infra.postgres, infra.salesPostgres]) {
        const postgres = new pg.Client({ connectionString: server.url() });
        await postgres.connect();
        await postgres.query('create database erp');
        await postgres.end();
      }
      // The sales schema on a server of its own, as a deployment that split its heaviest schema off.
      databases = { databaseUrl: infra.postgres.url('erp'), databaseUrls: { sales: infra.salesPostgres.url('erp') } };
    }

    // With the HA cluster, the owners of exported data read their exports from its read-only endpoint.
    const replicaReads: Record<string, string> = ha ? { DATABASE_URL_READ: ha.roUrl('erp') } : {};
    cluster = new Cluster(
      {
        DATABASE_URL: databases.databaseUrl,
        NATS_URL: infra.natsUrl,
        // Every stream (events, the key-value and object stores) on all three servers.
        JETSTREAM_REPLICAS: '3',
        REDIS_URL: infra.redisUrl,
        SUBJECT_PREFIX: CHAOS_PREFIX,
        REDIS_KEY_PREFIX: CHAOS_PREFIX,
        DB_POOL_MAX: '5',
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        SHUTDOWN_TIMEOUT_MS: '20000',
        RATE_LIMIT_STANDARD: '100000000',
        RATE_LIMIT_DATE_FILTERED: '100000000',
        // The fuzzing sends thousands of requests with bad keys from one address; the limit on failed authentications has its own test.
        AUTH_FAILURES_PER_WINDOW: '100000000',
        // The shops phase's simulated shops answer over HTTPS with a certificate of the run's test CA.
        ...(phases.has('shops') ? { NODE_EXTRA_CA_CERTS: caFile() } : {}),
      },
      {
        inventory: {
          RESERVATION_TIMEOUT_MS: '3000',
          RESERVATION_SWEEP_INTERVAL_MS: '500',
          RESERVATION_CHECK_TIMEOUT_MS: '1500',
          ...replicaReads,
        },
        returns: replicaReads,
        sales: {
          ...replicaReads,
          DATABASE_URL: databases.databaseUrls!.sales!,
          REGISTRATION_SWEEP_INTERVAL_MS: '500',
          REGISTRATION_SQUARE_AFTER_MS: '2000',
          // Past the 8 s request timeout: a change still running is never taken for a dead one.
          REVISION_SWEEP_INTERVAL_MS: '500',
          REVISION_SQUARE_AFTER_MS: '20000',
        },
        // A delivery whose event a fault lost is given a new one within the settle's two minutes, not 20.
        'webhook-ingest': { WEBHOOK_REQUEUE_AFTER_MS: '30000', WEBHOOK_REQUEUE_INTERVAL_MS: '2000' },
        // The isolation sweep subscribes receivers on loopback.
        subscriptions: {
          EVENTS_ALLOW_PRIVATE_URLS: 'true',
          EVENTS_ALLOW_HTTP: 'true',
          // The loopback receivers answer at once. A delivery is leased for its place in its lane times
          // this (25 × 11 s with the default 10 s): a killed sender's lane comes back within 80 s, not 4.5 min.
          EVENTS_DELIVERY_TIMEOUT_MS: '2000',
        },
      },
      logDir,
    );
    await cluster.migrate();
    log('schemas migrated; starting the services (two gateways, two sales replicas)');
    const rotation = new Rotation();
    for (const name of [
      'inventory',
      'sales',
      'sales',
      'returns',
      'packages',
      'webhook-ingest',
      'subscriptions',
      'exports',
      'gateway',
      'gateway',
    ] as const) {
      const replica = await cluster.start(name);
      if (replica.url) rotation.add(replica.url);
    }
    admin = await Bus.connect({
      servers: infra.natsUrl,
      prefix: CHAOS_PREFIX,
      name: 'chaos-admin',
      logger: createLogger('chaos-admin', 'silent'),
      requestTimeoutMs: 30_000,
    });
    companies = companiesOf(await seedFixture(admin, reliabilityFixture()));
    log('fixture seeded: companies A and B (lookalikes) and S (no selling without stock)');
    const target = { baseUrl: rotation.list()[0]!, databases, companies };

    let isolationRequests = 0;
    if (phases.has('isolation')) {
      const isolation = await isolationSweep(target);
      isolationRequests = isolation.requests;
      log(
        `isolation sweep: ${isolation.requests} requests, ${isolation.checks} checks over ${isolation.endpoints.length} endpoints, ${isolation.violations.length} violations`,
      );
      for (const v of isolation.violations.slice(0, 20)) log(`  ✗ ${v}`);
      if (isolation.violations.length > 0) failures.push(`isolation: ${isolation.violations.length} violations`);
    }

    let fuzzCases = 0;
    if (phases.has('fuzz')) {
      log(
        `fuzzing every endpoint, ${settings.fuzzRuns} cases each, ${Math.ceil(settings.fuzzRuns / 4)} per webhook (seed ${settings.fuzzSeed})`,
      );
      const fuzz = await fuzzApi(target, {
        runs: settings.fuzzRuns,
        webhookRuns: Math.ceil(settings.fuzzRuns / 4),
        seed: settings.fuzzSeed,
        maxViolations: 200,
      });
      fuzzCases = fuzz.cases;
      console.log(formatFuzzReport(fuzz));
      if (fuzz.violations.length > 0) failures.push(`fuzzing: ${fuzz.violations.length} violations`);
    }

    const updates = apiRoutes({ standard: 1, withDateFilters: 1 }).some((r) => r.method === 'put' && r.path === '/sales/:id');
    // A partner of each lookalike company receives every event of it through the faults that follow.
    receiver = await EventReceiver.start();
    for (const ref of ['a', 'b'] as const) await receiver.subscribe(target.baseUrl, ref, companies[ref]);
    log('a loopback receiver subscribed to every event of companies A and B');
    const ctx = { infra, cluster, companies, admin, rotation, databases, receiver, updates, log };
    if (phases.has('crash')) results.push(await crashScenario(ctx, { pauseMs: settings.pauseMs, seed }));
    if (ha) results.push(await failoverScenario(ctx, ha, { requestTimeoutMs: REQUEST_TIMEOUT_MS, rounds: settings.failoverRounds }));
    if (phases.has('rolling')) results.push(await rollingRestartScenario(ctx));
    if (phases.has('overload'))
      results.push(await overloadScenario(ctx, { clients: settings.overloadClients, seconds: settings.soakSeconds, maxInflight: 32 }));
    if (phases.has('shops'))
      results.push(
        await shopsScenario(ctx, {
          seed,
          reconcileIntervalMs: settings.shopsIntervalMs,
          downMs: settings.shopsDownSeconds * 1000,
          processingMs: 30_000,
          drop: 0.2,
        }),
      );

    for (const r of results) {
      const text = [
        `\n== ${r.name}`,
        ...r.events.map((e) => `   ${e}`),
        `   requests: ${r.tally.summary()}`,
        `   not 2xx, by operation: ${JSON.stringify(r.tally.notOk())}`,
        ...Object.entries(r.figures).map(([key, value]) => `   ${key}: ${value}`),
        formatInvariants(r.invariants).replace(/^/gm, '   '),
        ...r.problems.map((p) => `   ✗ ${p}`),
      ].join('\n');
      console.log(text);
      report(text);
      const broken = r.invariants.filter((i) => i.violations.length > 0).length;
      if (broken > 0 || r.problems.length > 0) failures.push(`${r.name}: ${broken} invariants broken, ${r.problems.length} problems`);
    }
    const invariantsChecked = results.reduce((s, r) => s + r.invariants.length, 0);
    const itemsChecked = results.reduce((s, r) => s + r.invariants.reduce((t, i) => t + i.checked, 0), 0);
    const total = results.reduce((s, r) => s + r.tally.total, 0) + fuzzCases + isolationRequests;
    summary =
      `${total} requests (${fuzzCases} fuzz cases, ${isolationRequests} isolation requests, ${total - fuzzCases - isolationRequests} under faults and load), ` +
      `${invariantsChecked} invariant checks over ${itemsChecked} items, ${cluster.startedCount} service processes started, ${((Date.now() - begun) / 60_000).toFixed(1)} minutes`;
    console.log(`\n== summary: ${summary}`);
  } catch (err) {
    failures.push(`the run stopped: ${(err as Error).stack ?? String(err)}`);
  } finally {
    await admin?.drain().catch(() => undefined);
    await receiver?.stop();
    await cluster?.stop().catch(() => undefined);
    if (failures.length > 0) {
      // The servers are still up: the evidence reads the rows behind each violation.
      await writeEvidence(k, results, { infra, logDir, databases, companies }).catch((err: unknown) =>
        log(`the evidence could not be gathered: ${(err as Error).stack ?? String(err)}`),
      );
      const kept = path.join(runDir, `repeat-${k}`);
      cpSync(logDir, path.join(kept, 'logs'), { recursive: true });
      for (const file of serverLogs(infra)) cpSync(file, path.join(kept, 'servers', path.relative(infra.dir, file)), { recursive: true });
      log(`service logs kept in ${path.join(kept, 'logs')}, the servers' in ${path.join(kept, 'servers')}`);
    }
    // CHAOS_KEEP=1 keeps the servers' data of a failed run, to read the rows behind a violation.
    const keep = failures.length > 0 && process.env.CHAOS_KEEP === '1';
    await ha?.stop({ keep: true });
    await infra.stop({ keep });
    if (keep) log(`server data kept in ${infra.dir}`);
  }
  if (failures.length > 0) console.log(`\nFAILED:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
  else console.log('\nevery guarantee held');
  return { failures, summary };
}

/** For each result that broke a check or had a problem: the steps it took, and each failed check's evidence, to the report (in brief on stdout). */
async function writeEvidence(
  k: number,
  results: ScenarioResult[],
  where: {
    infra: PrivateInfra;
    logDir: string;
    databases: DatabaseUrls | undefined;
    companies: Record<CompanyRef, Company> | undefined;
  },
): Promise<void> {
  for (const r of results) {
    const broken = r.invariants.filter((i) => i.violations.length > 0);
    if (broken.length === 0 && r.problems.length === 0) continue;
    const title = `evidence of repeat ${k}, ${r.name}${r.seed !== undefined ? ` (seed ${r.seed})` : ''}`;
    report(`\n--- ${title}`);
    if (r.faults && r.faults.length > 0)
      report(`steps of the phase, with their times (UTC):\n${formatFaults(r.faults, r.faults[0]!.at)}\n`);
    console.log(`\n--- ${title} (in full in ${reportFile})`);
    if (broken.length > 0 && where.databases && where.companies) {
      const evidence = await gatherEvidence({
        invariants: broken,
        problems: r.problems,
        faults: r.faults ?? [],
        ...(r.ledger ? { ledger: r.ledger } : {}),
        companies: where.companies,
        databases: where.databases,
        logDir: where.logDir,
        serverLogs: serverLogs(where.infra),
      });
      report(formatEvidence(evidence));
      console.log(formatEvidence(evidence, { brief: true }).replace(/^/gm, '   '));
    }
    if (r.problems.length > 0) {
      const tails = problemTails(r.problems, where.logDir);
      const text = [`problems:`, ...r.problems.map((p) => `  ✗ ${p}`), ...tails].join('\n');
      report(text);
      console.log(text.replace(/^/gm, '   '));
    }
  }
}

/** The servers' own logs in the run's directory: each nats-server's, Redis's, each Postgres server's. */
function serverLogs(infra: PrivateInfra): string[] {
  return [
    ...infra.nats.map((n) => path.join(infra.dir, `${n.name}.log`)),
    path.join(infra.dir, 'redis.log'),
    path.join(infra.dir, 'pg', 'postgres.log'),
    path.join(infra.dir, 'pg-sales', 'postgres.log'),
    // The failover phase's cluster: etcd, HAProxy, each Patroni node (its Postgres logs there too).
    path.join(infra.dir, 'ha', 'etcd.log'),
    path.join(infra.dir, 'ha', 'haproxy.log'),
    path.join(infra.dir, 'ha', 'pg1', 'patroni.log'),
    path.join(infra.dir, 'ha', 'pg2', 'patroni.log'),
  ].filter((file) => existsSync(file));
}

function commit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

void main().then((code) => process.exit(code));
