import type { DatabaseUrls } from '@erp/back-office';
import type { Bus } from '@erp/bus';
import { streamName } from '@erp/contracts';
import { ALL_SERVICES, type Cluster, type Replica } from './cluster';
import { ExportRequests, checkExports } from './exports';
import { ChaosPlan, FaultLog, type FaultRecord } from './faults';
import { INITIAL_CORRELATIVES, type Company, type CompanyRef } from './fixture';
import { Tally, call } from './http';
import { checkInvariants, settle, type InvariantResult } from './invariants';
import { Load, type LoadLedger, type LoadOptions } from './load';
import { heapVerdict, memoryOf, type MemorySample } from './memory';
import { checkPartnerEvents, type EventReceiver } from './partner-events';
import { CHAOS_PREFIX, type PrivateInfra } from './private-infra';
import { sleep } from './wait';

/** Gateway addresses the load's clients spread their requests over, as a Service's endpoints. */
export class Rotation {
  private urls: string[] = [];
  add(url: string): void {
    if (!this.urls.includes(url)) this.urls.push(url);
  }
  remove(url: string): void {
    this.urls = this.urls.filter((u) => u !== url);
  }
  list = (): string[] => [...this.urls];
}

export interface ChaosContext {
  infra: PrivateInfra;
  cluster: Cluster;
  companies: Record<CompanyRef, Company>;
  admin: Bus;
  rotation: Rotation;
  databases: DatabaseUrls;
  /** A partner's receiver subscribed to every event of the companies, checked after each scenario. */
  receiver?: EventReceiver;
  updates: boolean;
  log: (line: string) => void;
}

export interface ScenarioResult {
  name: string;
  tally: Tally;
  /** What was done to the system, in order. */
  events: string[];
  invariants: InvariantResult[];
  /** Problems of the scenario itself (a failed request where none may fail, memory growth, …). */
  problems: string[];
  figures: Record<string, string | number>;
  /** The crash phase's seed, every step it took with its time, and what its load was told was done: a failed check's evidence. */
  seed?: number;
  faults?: FaultRecord[];
  ledger?: LoadLedger;
}

export async function finish(
  ctx: ChaosContext,
  name: string,
  load: Load,
  events: string[],
  problems: string[],
  figures: Record<string, string | number> = {},
  exports?: ExportRequests,
): Promise<ScenarioResult> {
  ctx.log(`${name}: load stopped; waiting for the system to settle`);
  const pending = await settle(ctx.databases, 180_000);
  if (pending.length > 0) problems.push(`did not settle within 180 s: ${pending.join(', ')}`);
  const invariants = await checkInvariants({
    databases: ctx.databases,
    ledger: load.ledger,
    companies: ctx.companies,
    initialCorrelatives: INITIAL_CORRELATIVES,
    gateway: ctx.rotation.list()[0]!,
  });
  if (ctx.receiver) invariants.push(...(await checkPartnerEvents(ctx.receiver, ctx.rotation.list()[0]!, load.ledger, ctx.companies)));
  if (exports) {
    invariants.push(
      ...(await checkExports(ctx.rotation.list()[0]!, ctx.companies).catch((err: unknown) => [
        { name: 'every completed export is one snapshot', checked: 0, violations: [`check failed to run: ${(err as Error).message}`] },
      ])),
    );
    figures['exports asked for (accepted, refused at the limit, not answered)'] =
      `${exports.tally.accepted}, ${exports.tally.refused}, ${exports.tally.unanswered}`;
  }
  return { name, tally: load.tally, events, invariants, problems, figures };
}

/**
 * Replicas that died by themselves are problems of the run; each is replaced (as Kubernetes
 * restarts a crashed pod) so the run goes on and shows whether the system recovers.
 */
export async function replaceCrashed(ctx: ChaosContext, problems: string[], event: (line: string) => void, during: string): Promise<void> {
  while (ctx.cluster.crashes.length > 0) {
    const crash = ctx.cluster.crashes.shift()!;
    problems.push(`${crash.label} died by itself ${during} (exit ${crash.code ?? crash.signal}): ${crash.reason}`);
    const successor = await ctx.cluster.start(crash.name);
    if (crash.url) {
      ctx.rotation.remove(crash.url);
      ctx.rotation.add(successor.url!);
    }
    event(`${crash.label} had crashed ${during}; ${successor.label} started in its place`);
  }
}

export function newLoad(
  ctx: ChaosContext,
  runId: string,
  workers: number,
  seed?: number,
  more: Pick<LoadOptions, 'mix' | 'thinkMs'> = {},
): Load {
  return new Load({
    gateways: ctx.rotation.list,
    companies: ctx.companies,
    workers,
    thinkMs: 20,
    runId,
    updates: ctx.updates,
    admin: ctx.admin,
    attempts: 12,
    ...(seed !== undefined ? { seed } : {}),
    ...more,
  });
}

/**
 * Crash faults under a steady mixed load: SIGKILL to each service in turn (both sales replicas
 * at once as well), NATS (a node, the events stream's leader, the meta leader, two nodes in turn,
 * a node partitioned away, quorum lost), Redis and each Postgres server restarted. A killed
 * replica is started again (a new gateway takes the dead one's place in the rotation).
 *
 * The seed shapes the phase (ChaosPlan): the order of all these faults, the pause after each
 * (half to one and a half times `pauseMs`), how long each process stays down, the partition's and
 * the quorum loss's length, whether a service replica is also killed in the middle of a NATS,
 * Redis or Postgres fault (and when), the export requests' pace and the load's mix. Every step is
 * recorded with its time in the result's `faults`, and the load's ledger keeps when each write was
 * acknowledged, so a failed check can name the faults around its items.
 */
export async function crashScenario(ctx: ChaosContext, options: { pauseMs: number; seed: number }): Promise<ScenarioResult> {
  const plan = new ChaosPlan(options.seed, options.pauseMs);
  const faults = new FaultLog();
  const events: string[] = [];
  const problems: string[] = [];
  const load = newLoad(ctx, 'crash', 8, plan.loadSeed);
  // Partners taking bulk exports through every fault: each completed one is checked as a snapshot.
  const exports = new ExportRequests(ctx.rotation.list, Object.values(ctx.companies), plan.exportEveryMs);
  const event = (line: string, kind: FaultRecord['kind'] = 'recovery') => {
    events.push(line);
    faults.record(kind, line);
    ctx.log(`crash: ${line}`);
  };
  /** A fault that lasts: recorded when it begins, its end marked when `run` resolves. */
  const fault = async (what: string, run: () => Promise<void>) => {
    events.push(what);
    ctx.log(`crash: ${what}`);
    const end = faults.record('fault', what);
    try {
      await run();
    } finally {
      end();
    }
  };
  const crashed = (line: string) => event(line, 'fault');
  /** Replicas that exited while starting (in the middle of a dependency's fault) and were started again. */
  let failedStarts = 0;
  event(`seed ${options.seed}: the load's mix ${plan.loadSeed}, an export asked for every ${plan.exportEveryMs} ms`, 'note');
  load.start();
  exports.start();
  await sleep(plan.pause());

  /** SIGKILL to the replicas at once, down for a drawn while, then each started again (the gateway's rotation follows). */
  const killAndRestart = async (replicas: Replica[], downMs = plan.between(500, 3_000)) => {
    const labels = replicas.map((r) => r.label).join(' and ');
    await fault(`kill -9 ${labels}, down ${downMs} ms`, async () => {
      await Promise.all(replicas.map((r) => ctx.cluster.signal(r, 'SIGKILL')));
      await sleep(downMs);
    });
    for (const r of replicas) {
      const successor = await ctx.cluster.startRetrying(r.name, {
        onFailedStart: (label, reason) => {
          failedStarts++;
          event(`${label} exited while starting (${reason.slice(0, 160)}); started again in 2 s, as Kubernetes restarts a pod`, 'fault');
        },
      });
      if (r.url) {
        ctx.rotation.remove(r.url);
        ctx.rotation.add(successor.url!);
      }
      event(`${successor.label} started in its place`);
    }
  };

  const { infra } = ctx;
  const stream = streamName(CHAOS_PREFIX);
  const nodeName = (i: number) => infra.nats[i]!.name;
  const down = () => plan.between(1_000, 4_000);
  type Step = { what: string; infra: boolean; run: () => Promise<void> };
  const steps: Step[] = [];
  for (const name of ALL_SERVICES)
    steps.push({ what: `kill -9 of one ${name} replica`, infra: false, run: () => killAndRestart([ctx.cluster.of(name)[0]!]) });
  steps.push({
    what: 'kill -9 of both sales replicas at once',
    infra: false,
    run: async () => {
      const sales = ctx.cluster.of('sales');
      if (sales.length >= 2) await killAndRestart(sales.slice(0, 2));
    },
  });
  const restartNats = (i: number, what: string) => {
    const ms = down();
    return fault(`${what}: ${nodeName(i)} killed, down ${ms} ms, restarted`, () => infra.restartNats(i, ms));
  };
  steps.push(
    { what: 'a NATS node killed and restarted', infra: true, run: () => restartNats(0, 'a NATS node') },
    {
      what: 'the NATS node leading the events stream killed and restarted',
      infra: true,
      run: async () => {
        const { stream: leader } = await infra.leaders(stream);
        await restartNats(leader, `the NATS node leading ${stream}`);
      },
    },
    {
      what: 'the JetStream meta leader killed and restarted',
      infra: true,
      run: async () => {
        const { meta } = await infra.leaders(stream);
        await restartNats(meta, 'the JetStream meta leader');
      },
    },
    {
      what: 'two NATS nodes killed and restarted in turn',
      infra: true,
      run: async () => {
        await restartNats(1, 'the first of two NATS nodes in turn');
        await infra.waitNatsCurrent(60_000);
        event(`  ${nodeName(1)} current again`);
        await sleep(plan.pause());
        await restartNats(2, 'the second of two NATS nodes in turn');
      },
    },
    {
      what: 'a NATS node partitioned away',
      infra: true,
      run: async () => {
        // Past the cluster's heartbeats: the others take it for gone.
        const ms = plan.between(9_000, 15_000);
        await fault(`NATS node ${nodeName(0)} partitioned away: SIGSTOP for ${ms} ms, then SIGCONT`, async () => {
          infra.nats[0]!.pause();
          await sleep(ms);
          infra.nats[0]!.resume();
        });
      },
    },
    {
      what: 'quorum lost',
      infra: true,
      run: async () => {
        const ms = plan.between(5_000, 12_000);
        const before = load.tally.snapshot();
        await fault(`quorum lost: NATS nodes ${nodeName(1)} and ${nodeName(2)} down together for ${ms} ms`, async () => {
          await Promise.all([infra.nats[1]!.kill(), infra.nats[2]!.kill()]);
          await sleep(ms);
          event(`  answered while quorum was lost: ${JSON.stringify(load.tally.since(before))}`, 'note');
          await Promise.all([infra.startNats(1), infra.startNats(2)]);
        });
      },
    },
    {
      what: 'Redis killed and restarted',
      infra: true,
      run: () => {
        const ms = down();
        return fault(`Redis killed, down ${ms} ms, restarted`, () => infra.restartRedis(ms));
      },
    },
    {
      what: 'Postgres (every schema but sales) killed and restarted',
      infra: true,
      run: () => {
        const ms = down();
        return fault(`Postgres (every schema but sales) killed, down ${ms} ms, restarted`, () => infra.postgres.restart(ms));
      },
    },
    {
      what: 'Postgres of the sales schema killed and restarted',
      infra: true,
      run: () => {
        const ms = down();
        return fault(`Postgres of the sales schema killed, down ${ms} ms, restarted`, () => infra.salesPostgres.restart(ms));
      },
    },
  );

  for (const step of plan.shuffle(steps)) {
    // Sometimes a service replica dies in the middle of a dependency's fault, at a drawn moment.
    // Drawn now, not when it strikes: the step's own draws keep their order whatever the timing.
    const overlap =
      step.infra && plan.chance(0.3)
        ? { name: plan.shuffle(ALL_SERVICES)[0]!, afterMs: plan.between(0, 3_000), downMs: plan.between(500, 3_000) }
        : undefined;
    const during = overlap
      ? (async () => {
          await sleep(overlap.afterMs);
          const victim = ctx.cluster.of(overlap.name)[0];
          if (victim) await killAndRestart([victim], overlap.downMs);
        })()
      : Promise.resolve();
    if (overlap) event(`(${overlap.name} replica to be killed ${overlap.afterMs} ms into the next fault)`, 'note');
    try {
      // Both to their end before going on, whichever failed.
      const [ran, overlapped] = await Promise.allSettled([step.run(), during]);
      for (const r of [ran, overlapped]) if (r.status === 'rejected') throw r.reason;
      await infra.waitNatsCurrent(120_000);
      await ctx.cluster.waitAllReady(120_000);
    } catch (err) {
      problems.push(`after "${step.what}": ${(err as Error).message}`);
    }
    await sleep(plan.pause());
    await replaceCrashed(ctx, problems, crashed, `after "${step.what}"`);
    event('  every replica ready again, every NATS node current');
  }
  await Promise.all([load.stop(), exports.stop()]);
  await replaceCrashed(ctx, problems, crashed, 'at the end of the faults');
  const result = await finish(
    ctx,
    'crash faults',
    load,
    events,
    problems,
    {
      seed: options.seed,
      'service processes started so far': ctx.cluster.startedCount,
      'replicas that exited while starting and were started again': failedStarts,
    },
    exports,
  );
  return { ...result, seed: options.seed, faults: faults.entries, ledger: load.ledger };
}

/**
 * A rolling update under load, as Kubernetes does it: for every replica of every service, a new
 * one is started and ready before the old one gets SIGTERM (for the gateway, the new address
 * joins the rotation and the old one leaves it first). No request may fail, none may need a retry.
 */
export async function rollingRestartScenario(ctx: ChaosContext): Promise<ScenarioResult> {
  const events: string[] = [];
  const problems: string[] = [];
  // Two replicas of everything, so each service keeps one serving while the other is replaced.
  for (const name of ALL_SERVICES) {
    while (ctx.cluster.of(name).length < 2) {
      const extra = await ctx.cluster.start(name);
      if (extra.url) ctx.rotation.add(extra.url);
    }
  }
  const load = newLoad(ctx, 'rolling', 6);
  load.start();
  await sleep(3_000);
  for (const name of ALL_SERVICES) {
    for (const old of ctx.cluster.of(name)) {
      const { successor, exit } = await ctx.cluster.replace(old, async (next) => {
        if (next.url) {
          ctx.rotation.add(next.url);
          ctx.rotation.remove(old.url!);
        }
      });
      const line = `${successor.label} ready, then SIGTERM to ${old.label}: exit ${exit.code ?? exit.signal}`;
      events.push(line);
      ctx.log(`rolling: ${line}`);
      if (exit.code !== 143) problems.push(`${old.label} exited with ${exit.code ?? exit.signal} after SIGTERM (expected 143)`);
      await sleep(1_000);
    }
  }
  await sleep(2_000);
  await load.stop();
  await replaceCrashed(ctx, problems, (line) => events.push(line), 'during the rolling restart');
  // A business rule's refusal is an answer, not a failure; whether it was expected is judged per operation below.
  const failed = Object.entries(load.tally.byStatus()).filter(
    ([status]) => status === '0' || (!/^[24]\d\d$/.test(status) && status !== 'BUSINESS_RULE'),
  );
  if (failed.length > 0) problems.push(`requests failed during the rolling restart: ${JSON.stringify(Object.fromEntries(failed))}`);
  const refused = [...load.tally.outcomes.entries()].filter(([key]) => / (4\d\d|BUSINESS_RULE)$/.test(key) && !expectedRefusal(key));
  if (refused.length > 0) problems.push(`requests refused during the rolling restart: ${JSON.stringify(Object.fromEntries(refused))}`);
  return finish(ctx, 'rolling restart', load, events, problems);
}

/**
 * Overload: far more concurrent clients than the services can take, on a gateway with a small
 * in-flight limit. What is past the limit must be refused at once (503 with Retry-After), none
 * may wait into a timeout, and the memory of the gateway and the services must stay level over
 * the soak (resident set sampled from their /metrics).
 */
export async function overloadScenario(
  ctx: ChaosContext,
  options: { clients: number; seconds: number; maxInflight: number },
): Promise<ScenarioResult> {
  const events: string[] = [];
  const problems: string[] = [];
  const gateway = await ctx.cluster.start('gateway', { MAX_INFLIGHT_REQUESTS: String(options.maxInflight) });
  events.push(
    `${gateway.label} with MAX_INFLIGHT_REQUESTS=${options.maxInflight}; ${options.clients} clients without pause for ${options.seconds} s`,
  );
  ctx.log(`overload: ${events[0]}`);
  const tally = new Tally();
  const a = ctx.companies.a;
  const paths = [
    `/api/external/v1/inventory?per_page=50`,
    `/api/external/v1/sales?per_page=20`,
    `/api/external/v1/sales/summary`,
    `/api/external/v1/inventory/${a.productos.laptop}`,
  ];
  const refusals: number[] = [];
  const missingRetryAfter = { n: 0 };
  /** When each answer 504 (or client timeout) came, in seconds from the start: they must not pile up. */
  const timeouts: number[] = [];
  const soakStart = Date.now();
  let n = 0;
  let running = true;
  const client = async () => {
    while (running) {
      const write = n++ % 5 === 0;
      const attempt = write
        ? await call(`${gateway.url}/api/external/v1/sales`, {
            method: 'POST',
            key: a.key,
            json: {
              fecha: '2026-03-10',
              estado: 'Completada',
              id_sucursal: a.sucursales.centro,
              id_bodega: a.bodegas.principal,
              id_documento: a.documentos.ticket,
              id_canal: a.canales.tienda,
              detalles: [{ id_producto: a.productos.cable, cantidad: 1 }],
            },
          })
        : await call(`${gateway.url}${paths[n % paths.length]}`, { key: a.key });
      tally.record(write ? 'POST /sales' : 'GET', attempt);
      if (attempt.status === 504 || attempt.error === 'timeout') timeouts.push((Date.now() - soakStart) / 1000);
      if (attempt.status === 503) {
        if (!attempt.headers.get('retry-after')) missingRetryAfter.n++;
        refusals.push(attempt.ms);
        // A well-behaved client waits as told.
        await sleep(Number(attempt.headers.get('retry-after') ?? 1) * 1000);
      }
    }
  };
  const targets: Array<{ label: string; url: string }> = [
    { label: gateway.label, url: gateway.opsUrl },
    ...ctx.cluster.of('sales').map((r) => ({ label: r.label, url: r.opsUrl })),
    ...ctx.cluster.of('inventory').map((r) => ({ label: r.label, url: r.opsUrl })),
  ];
  const samples = new Map<string, MemorySample[]>(targets.map((t) => [t.label, []]));
  const before = await memoryNow(targets);
  const sampler = (async () => {
    while (running) {
      for (const t of targets) {
        const memory = await memoryOf(t.url);
        if (memory) samples.get(t.label)!.push(memory);
      }
      await sleep(1_000);
    }
  })();
  const clients = Array.from({ length: options.clients }, client);
  await sleep(options.seconds * 1000);
  running = false;
  await Promise.all([...clients, sampler]);

  const byStatus = tally.byStatus();
  const unexpected = Object.entries(byStatus).filter(([status]) => !['200', '201', '503', '504', 'timeout'].includes(status));
  if (unexpected.length > 0)
    problems.push(`answers other than 2xx, 503 and 504 under overload: ${JSON.stringify(Object.fromEntries(unexpected))}`);
  if (!byStatus['503']) problems.push('the load never reached the in-flight limit (no 503): raise the clients');
  if (missingRetryAfter.n > 0) problems.push(`${missingRetryAfter.n} answers 503 without Retry-After`);
  // Timeouts may happen on a starved machine, but rarely, and not more and more as the soak goes on.
  const third = options.seconds / 3;
  const early = timeouts.filter((t) => t < third).length;
  const late = timeouts.filter((t) => t >= 2 * third).length;
  if (timeouts.length > tally.total * 0.005) problems.push(`${timeouts.length} timeouts out of ${tally.total} requests (over 0.5 %)`);
  if (late > early * 2 + 5) problems.push(`timeouts pile up: ${early} in the first third of the soak, ${late} in the last`);
  // What the gateway itself took to refuse (from its histogram): at once, not after waiting for a
  // slot. A refusal is synchronous, tens of microseconds from the first middleware to the answer:
  // it takes over a millisecond only when the process stalls in it (a collection, or the OS
  // running another process: a scavenge takes 10 to 100 ms on two loaded cores; 2 to 6 % of them
  // on a machine running the whole cluster), so the median is under 1 ms unless something is
  // awaited before refusing (the event loop lags by 10 ms at the median under this load), and one
  // that waited for a slot would take as long as the answers it waited behind (hundreds of ms).
  // Under 10 ms is a figure: up to about 1 % of refusals meet a stall that long.
  const shed = await shedTimings(gateway.opsUrl);
  if (shed.count > 0 && shed.within1ms / shed.count < 0.5)
    problems.push(`only ${shed.within1ms} of ${shed.count} refusals took under 1 ms in the gateway: something is awaited before refusing`);
  if (shed.count > 0 && shed.within100ms / shed.count < 0.99)
    problems.push(`${shed.count - shed.within100ms} of ${shed.count} refusals took over 100 ms in the gateway: they waited`);
  refusals.sort((x, y) => x - y);
  const figures: Record<string, string | number> = {
    'latency p50 / p99 of every answer, at the client (ms)': `${Math.round(tally.percentile(50))} / ${Math.round(tally.percentile(99))}`,
    'latency p50 / p99 of the 503 refusals, at the client (ms)': `${Math.round(refusals[Math.floor(refusals.length / 2)] ?? 0)} / ${Math.round(refusals[Math.floor(refusals.length * 0.99)] ?? 0)}`,
    'refusals the gateway answered within 1 / 10 / 100 ms': `${shed.within1ms} / ${shed.within10ms} / ${shed.within100ms} of ${shed.count}`,
    'timeouts (504 or none) in the first / last third of the soak': `${early} / ${late}`,
  };
  for (const [label, series] of samples) {
    if (series.length < 12) {
      problems.push(`${label}: only ${series.length} memory samples`);
      continue;
    }
    const mb = (values: number[]) => values.map((b) => b / 1024 / 1024);
    // After a warm-up fifth, the soak in halves for the heap (see heapVerdict: what a process keeps
    // shows only right after a full collection), in thirds for the resident set's peaks.
    const steady = series.slice(Math.floor(series.length / 5));
    const third = Math.floor(steady.length / 3);
    const [first, last] = [steady.slice(0, third), steady.slice(steady.length - third)];
    const rssPeak = (part: typeof series) => Math.max(...mb(part.map((m) => m.rss)));
    const heap = heapVerdict(steady);
    const rss = { early: rssPeak(first), late: rssPeak(last) };
    figures[`${label}: heap before / kept in the first half / lowest in the second half / after its full collections (MB)`] = [
      ((before.get(label)?.heap ?? NaN) / 1024 / 1024).toFixed(0),
      heap.early.toFixed(0),
      heap.late.toFixed(0),
      heap.afterCollections.length > 0 ? heap.afterCollections.map((v) => v.toFixed(0)).join(', ') : 'none',
    ].join(' / ');
    figures[`${label}: full collections in the soak`] = heap.judged
      ? heap.collections
      : `${heap.collections} (heap not judged: above the limit, no full collection in the second half)`;
    figures[`${label}: resident peak, first / last third (MB)`] = `${rss.early.toFixed(0)} / ${rss.late.toFixed(0)}`;
    if (heap.leak)
      problems.push(
        `${label}: the heap keeps growing (kept ${heap.early.toFixed(0)} MB in the first half of the soak, ${heap.afterCollections.map((v) => v.toFixed(0)).join(', ')} MB after the full collections of the second)`,
      );
    if (rss.late > rss.early * 1.5 + 40)
      problems.push(`${label}: resident memory keeps growing (${rss.early.toFixed(0)} MB → ${rss.late.toFixed(0)} MB)`);
  }
  await ctx.cluster.signal(gateway, 'SIGTERM');
  await replaceCrashed(ctx, problems, (line) => events.push(line), 'during the overload');
  const load = new Load({ gateways: ctx.rotation.list, companies: ctx.companies, workers: 0, runId: 'overload' });
  load.tally.merge(tally);
  return finish(ctx, 'overload', load, events, problems, figures);
}

/** Refusals by admission control as the gateway timed them: 503s of no route (they never reached one). */
async function shedTimings(opsUrl: string): Promise<{ count: number; within1ms: number; within10ms: number; within100ms: number }> {
  const res = await call(`${opsUrl}/metrics`, { timeoutMs: 5_000 });
  const out = { count: 0, within1ms: 0, within10ms: 0, within100ms: 0 };
  for (const line of res.text.split('\n')) {
    if (!line.startsWith('erp_http_request_duration_seconds_') || !line.includes('route="unmatched"') || !line.includes('status="503"'))
      continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('erp_http_request_duration_seconds_count')) out.count += value;
    else if (line.includes('le="0.001"')) out.within1ms += value;
    else if (line.includes('le="0.01"')) out.within10ms += value;
    else if (line.includes('le="0.1"')) out.within100ms += value;
  }
  return out;
}

async function memoryNow(targets: Array<{ label: string; url: string }>): Promise<Map<string, MemorySample>> {
  const out = new Map<string, MemorySample>();
  for (const t of targets) {
    const memory = await memoryOf(t.url);
    if (memory) out.set(t.label, memory);
  }
  return out;
}

/**
 * Refusals the load provokes on purpose: an oversell on the company that forbids it, and the loser
 * of a return racing an annulment or an update of the same sale.
 */
function expectedRefusal(outcome: string): boolean {
  return outcome.startsWith('POST /sales (no oversell) 422') || (outcome.includes(' racing ') && / (422|BUSINESS_RULE)$/.test(outcome));
}
