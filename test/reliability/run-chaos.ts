import { cpSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { seedFixture, type DatabaseUrls } from '@erp/admin';
import { Bus } from '@erp/bus';
import { createLogger } from '@erp/runtime';
import { apiRoutes } from '../../services/gateway/src/http/routes';
import { Cluster } from './support/cluster';
import { companiesOf, reliabilityFixture } from './support/fixture';
import { formatFuzzReport, fuzzApi } from './support/fuzz';
import { formatInvariants } from './support/invariants';
import { EventReceiver } from './support/partner-events';
import { isolationSweep } from './support/isolation';
import { CHAOS_PREFIX, PrivateInfra, privateInfraMissing } from './support/private-infra';
import { Rotation, crashScenario, overloadScenario, rollingRestartScenario, type ScenarioResult } from './support/scenarios';

/**
 * `npm run test:chaos`: the full reliability run against Postgres, NATS and Redis of its own
 * (free loopback ports, a temp directory; the shared servers on the default ports are never
 * touched), every service as its own process. Phases: tenant isolation sweep, input fuzzing,
 * crash faults under load, rolling restart under load, overload soak. Prints the figures and
 * exits 1 when any guarantee was broken. Bounded: a deadline stops it whatever happens.
 *
 * Environment: CHAOS_PHASES (isolation,fuzz,crash,rolling,overload), CHAOS_FUZZ_RUNS (cases per
 * endpoint, 1000), CHAOS_FUZZ_SEED, CHAOS_SOAK_SECONDS (90), CHAOS_OVERLOAD_CLIENTS (300),
 * CHAOS_PAUSE_MS (between faults, 4000), CHAOS_DEADLINE_MINUTES (30), CHAOS_KEEP (1: keep a failed run's server data).
 */
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  fuzzRuns: env('CHAOS_FUZZ_RUNS', 1000),
  fuzzSeed: env('CHAOS_FUZZ_SEED', Date.now() % 1_000_000),
  soakSeconds: env('CHAOS_SOAK_SECONDS', 90),
  overloadClients: env('CHAOS_OVERLOAD_CLIENTS', 300),
  pauseMs: env('CHAOS_PAUSE_MS', 4_000),
  deadlineMinutes: env('CHAOS_DEADLINE_MINUTES', 30),
  phases: new Set((process.env.CHAOS_PHASES ?? 'isolation,fuzz,crash,rolling,overload').split(',').map((p) => p.trim())),
};

const started = Date.now();
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);

async function main(): Promise<number> {
  const missing = privateInfraMissing();
  if (missing.length > 0) {
    console.error(`The chaos run starts its own Postgres, NATS and Redis, and needs: ${missing.join(', ')}`);
    return 2;
  }
  const deadline = setTimeout(() => {
    console.error(`deadline of ${settings.deadlineMinutes} minutes reached: stopping`);
    process.exit(3);
  }, settings.deadlineMinutes * 60_000);
  deadline.unref();

  log(`settings ${JSON.stringify({ ...settings, phases: [...settings.phases] })}`);
  const infra = await PrivateInfra.start({ natsNodes: 3 });
  log(
    `private Postgres :${infra.postgres.port} and :${infra.salesPostgres.port} (sales), NATS cluster ${infra.nats.map((n) => `${n.name} :${n.port}`).join(', ')}, Redis :${infra.redisPort} in ${infra.dir}`,
  );
  const logDir = path.join(infra.dir, 'logs');
  mkdirSync(logDir);
  for (const server of [infra.postgres, infra.salesPostgres]) {
    const postgres = new pg.Client({ connectionString: server.url() });
    await postgres.connect();
    await postgres.query('create database erp');
    await postgres.end();
  }
  // The sales schema on a server of its own, as a deployment that split its heaviest schema off.
  const databases: DatabaseUrls = { databaseUrl: infra.postgres.url('erp'), databaseUrls: { sales: infra.salesPostgres.url('erp') } };

  const cluster = new Cluster(
    {
      DATABASE_URL: databases.databaseUrl,
      NATS_URL: infra.natsUrl,
      // Every stream (events, the key-value and object stores) on all three servers.
      JETSTREAM_REPLICAS: '3',
      REDIS_URL: infra.redisUrl,
      SUBJECT_PREFIX: CHAOS_PREFIX,
      REDIS_KEY_PREFIX: CHAOS_PREFIX,
      DB_POOL_MAX: '5',
      REQUEST_TIMEOUT_MS: '8000',
      SHUTDOWN_TIMEOUT_MS: '20000',
      RATE_LIMIT_STANDARD: '100000000',
      RATE_LIMIT_DATE_FILTERED: '100000000',
      // The fuzzing sends thousands of requests with bad keys from one address; the limit on failed authentications has its own test.
      AUTH_FAILURES_PER_WINDOW: '100000000',
    },
    {
      inventory: { RESERVATION_TIMEOUT_MS: '3000', RESERVATION_SWEEP_INTERVAL_MS: '500', RESERVATION_CHECK_TIMEOUT_MS: '1500' },
      sales: {
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
  const results: ScenarioResult[] = [];
  const failures: string[] = [];
  let admin: Bus | undefined;
  let receiver: EventReceiver | undefined;
  try {
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
    const companies = companiesOf(await seedFixture(admin, reliabilityFixture()));
    log('fixture seeded: companies A and B (lookalikes) and S (no selling without stock)');
    const target = { baseUrl: rotation.list()[0]!, databases, companies };

    let isolationRequests = 0;
    if (settings.phases.has('isolation')) {
      const isolation = await isolationSweep(target);
      isolationRequests = isolation.requests;
      log(
        `isolation sweep: ${isolation.requests} requests, ${isolation.checks} checks over ${isolation.endpoints.length} endpoints, ${isolation.violations.length} violations`,
      );
      for (const v of isolation.violations.slice(0, 20)) log(`  ✗ ${v}`);
      if (isolation.violations.length > 0) failures.push(`isolation: ${isolation.violations.length} violations`);
    }

    let fuzzCases = 0;
    if (settings.phases.has('fuzz')) {
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
    if (settings.phases.has('crash')) results.push(await crashScenario(ctx, { pauseMs: settings.pauseMs }));
    if (settings.phases.has('rolling')) results.push(await rollingRestartScenario(ctx));
    if (settings.phases.has('overload'))
      results.push(await overloadScenario(ctx, { clients: settings.overloadClients, seconds: settings.soakSeconds, maxInflight: 32 }));

    for (const r of results) {
      console.log(`\n== ${r.name}`);
      for (const e of r.events) console.log(`   ${e}`);
      console.log(`   requests: ${r.tally.summary()}`);
      console.log(`   not 2xx, by operation: ${JSON.stringify(r.tally.notOk())}`);
      for (const [k, v] of Object.entries(r.figures)) console.log(`   ${k}: ${v}`);
      console.log(formatInvariants(r.invariants).replace(/^/gm, '   '));
      for (const p of r.problems) console.log(`   ✗ ${p}`);
      const broken = r.invariants.filter((i) => i.violations.length > 0).length;
      if (broken > 0 || r.problems.length > 0) failures.push(`${r.name}: ${broken} invariants broken, ${r.problems.length} problems`);
    }
    const invariantsChecked = results.reduce((s, r) => s + r.invariants.length, 0);
    const itemsChecked = results.reduce((s, r) => s + r.invariants.reduce((t, i) => t + i.checked, 0), 0);
    const total = results.reduce((s, r) => s + r.tally.total, 0) + fuzzCases + isolationRequests;
    console.log(
      `\n== summary: ${total} requests (${fuzzCases} fuzz cases, ${isolationRequests} isolation requests, ${total - fuzzCases - isolationRequests} under faults and load), ` +
        `${invariantsChecked} invariant checks over ${itemsChecked} items, ${cluster.startedCount} service processes started, ${((Date.now() - started) / 60_000).toFixed(1)} minutes`,
    );
  } catch (err) {
    failures.push(`the run stopped: ${(err as Error).stack ?? String(err)}`);
  } finally {
    await admin?.drain().catch(() => undefined);
    await receiver?.stop();
    await cluster.stop().catch(() => undefined);
    if (failures.length > 0) {
      const kept = path.join(os.tmpdir(), `erp-chaos-logs-${Date.now()}`);
      cpSync(logDir, kept, { recursive: true });
      console.log(`service logs kept in ${kept}`);
    }
    // CHAOS_KEEP=1 keeps the servers' data of a failed run, to read the rows behind a violation.
    const keep = failures.length > 0 && process.env.CHAOS_KEEP === '1';
    await infra.stop({ keep });
    if (keep) console.log(`server data kept in ${infra.dir}`);
  }
  if (failures.length > 0) {
    console.log(`\nFAILED:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    return 1;
  }
  console.log('\nevery guarantee held');
  return 0;
}

void main().then((code) => process.exit(code));
