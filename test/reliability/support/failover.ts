import { createPool, pgErrorKind } from '@erp/db';
import type pg from 'pg';
import { ExportRequests } from './exports';
import { HA_CHECK, HA_TIMINGS, type HaPostgres } from './ha-postgres';
import { finish, newLoad, replaceCrashed, type ChaosContext, type ScenarioResult } from './scenarios';
import { sleep, waitFor } from './wait';

/**
 * A writer through the read-write endpoint, as a service writes: its own pool (the services'
 * settings), one insert every `everyMs`, each acknowledged insert remembered with its time. After a
 * failover every acknowledged row must be there once, and the first acknowledgement after a kill
 * is the time the database was without a primary for its clients.
 */
export class WriteProbe {
  private readonly pool: pg.Pool;
  private running = false;
  private loop?: Promise<void>;
  private n = 0;
  /** Acknowledged inserts: the value written and when its commit returned. */
  readonly acked: Array<{ n: number; at: number }> = [];
  /** Attempts that failed, by kind (`unavailable`, or the error's message), and the longest one took. */
  readonly failures = new Map<string, number>();
  longestMs = 0;
  /** The standby's replay lag as the primary reports it (pg_stat_replication.replay_lag), sampled every second: milliseconds. */
  readonly replayLagMs: number[] = [];
  /** Bytes of WAL the standby had not replayed yet at each sample. */
  readonly replayLagBytes: number[] = [];

  constructor(
    url: string,
    private readonly everyMs = 100,
  ) {
    this.pool = createPool({
      connectionString: url,
      max: 2,
      applicationName: 'failover-probe',
      connectTimeoutMs: 2_000,
      statementTimeoutMs: 5_000,
    });
  }

  async start(): Promise<void> {
    await this.pool.query('create table if not exists failover_probe (n bigint primary key, at timestamptz not null default now())');
    this.running = true;
    this.loop = Promise.all([this.run(), this.sampleLag()]).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async sampleLag(): Promise<void> {
    while (this.running) {
      try {
        const { rows } = await this.pool.query<{ ms: number | null; bytes: string | null }>(
          `select extract(epoch from replay_lag) * 1000 as ms, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text as bytes
             from pg_stat_replication where sync_state = 'sync'`,
        );
        if (rows[0]) {
          this.replayLagMs.push(Number(rows[0].ms ?? 0));
          this.replayLagBytes.push(Number(rows[0].bytes ?? 0));
        }
      } catch {
        // no primary just now: the failover is measured by the writes
      }
      await sleep(1_000);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** The first acknowledgement of an insert begun after `since`. */
  async firstAckAfter(since: number, timeoutMs: number): Promise<number> {
    let at: number | undefined;
    await waitFor(
      async () => {
        at = this.acked.find((a) => a.at > since && a.n > 0 && this.sentAt.get(a.n)! >= since)?.at;
        return at !== undefined;
      },
      timeoutMs,
      'a write acknowledged through the read-write endpoint',
    );
    return at!;
  }

  /** Acknowledged values missing from the table, or there more than once (the primary key makes the latter impossible; checked all the same). */
  async check(): Promise<{ acked: number; missing: number[]; extra: number }> {
    const { rows } = await this.pool.query<{ n: number }>('select n from failover_probe');
    const present = new Set(rows.map((r) => Number(r.n)));
    const missing = this.acked.filter((a) => !present.has(a.n)).map((a) => a.n);
    return { acked: this.acked.length, missing, extra: rows.length - present.size };
  }

  private readonly sentAt = new Map<number, number>();

  private async run(): Promise<void> {
    while (this.running) {
      const n = ++this.n;
      const started = Date.now();
      this.sentAt.set(n, started);
      try {
        await this.pool.query('insert into failover_probe (n) values ($1)', [n]);
        this.acked.push({ n, at: Date.now() });
      } catch (err) {
        const kind = pgErrorKind(err) ?? (err as Error).message;
        this.failures.set(kind, (this.failures.get(kind) ?? 0) + 1);
      }
      this.longestMs = Math.max(this.longestMs, Date.now() - started);
      await sleep(Math.max(0, this.everyMs - (Date.now() - started)));
    }
  }
}

/** Longest a failover may leave the API without a primary: kill to the first acknowledged write. */
export const FIRST_WRITE_TARGET_MS = 15_000;

/** One failover: which node was killed, and the times from the kill (milliseconds). */
export interface FailoverRound {
  /** When the primary's node was killed (epoch ms). */
  killedAt: number;
  killed: string;
  promoted: string;
  /** Kill to the standby reported primary by Patroni. */
  promotedMs: number;
  /** Kill to the first insert begun after it that was acknowledged through the read-write endpoint. */
  firstWriteMs: number;
  /** Kill to the old primary running again as the synchronous standby. */
  rejoinedMs: number;
}

/**
 * Kills the primary node (SIGKILL to Patroni and Postgres), measures until a write through the
 * read-write endpoint succeeds and the standby is primary, starts the killed node again and waits
 * until it is the synchronous standby.
 */
export async function failover(ha: HaPostgres, probe: WriteProbe, log: (line: string) => void): Promise<FailoverRound> {
  const { primary, standby } = await ha.waitHealthy(60_000);
  const killed = ha.nodes[primary]!.name;
  const promoted = ha.nodes[standby]!.name;
  const t0 = Date.now();
  await ha.killNode(primary);
  log(`SIGKILL to ${killed} (Patroni and Postgres), the primary; ${promoted} is the synchronous standby`);
  let promotedAt = 0;
  const promotion = waitFor(
    async () => {
      if ((await ha.primary()) !== standby) return false;
      promotedAt = Date.now();
      return true;
    },
    60_000,
    `${promoted} promoted`,
  );
  const [firstWrite] = await Promise.all([probe.firstAckAfter(t0, 60_000), promotion]);
  log(
    `${promoted} primary after ${((promotedAt - t0) / 1000).toFixed(1)} s, first write acknowledged after ${((firstWrite - t0) / 1000).toFixed(1)} s`,
  );
  await ha.startNode(primary);
  await ha.waitHealthy(120_000);
  const rejoinedAt = Date.now();
  log(`${killed} back as the synchronous standby after ${((rejoinedAt - t0) / 1000).toFixed(1)} s`);
  return { killedAt: t0, killed, promoted, promotedMs: promotedAt - t0, firstWriteMs: firstWrite - t0, rejoinedMs: rejoinedAt - t0 };
}

/**
 * The failover phase: the services' databases behind the HA cluster's read-write endpoint, a mixed
 * load and export requests running, the primary's node killed (SIGKILL to Patroni and Postgres),
 * the synchronous standby promoted, the old primary started again and rejoining as the standby;
 * then the same the other way. At rest: every write answered 2xx is in the books once (the
 * invariants), every insert the probe was acknowledged is there, no request waited past the
 * gateway's request timeout, and the kill-to-first-write times are the phase's figures.
 */
export async function failoverScenario(
  ctx: ChaosContext,
  ha: HaPostgres,
  options: { rounds?: number; requestTimeoutMs: number },
): Promise<ScenarioResult> {
  const events: string[] = [];
  const problems: string[] = [];
  const event = (line: string) => {
    events.push(line);
    ctx.log(`failover: ${line}`);
  };
  const load = newLoad(ctx, 'failover', 6);
  const exports = new ExportRequests(ctx.rotation.list, Object.values(ctx.companies), 4_000);
  const probe = new WriteProbe(ha.rwUrl());
  await probe.start();
  load.start();
  exports.start();
  await sleep(5_000);
  const rounds: FailoverRound[] = [];
  const apiFirstWrites: number[] = [];
  try {
    for (let i = 0; i < (options.rounds ?? 2); i++) {
      const round = await failover(ha, probe, event);
      rounds.push(round);
      // The partners' side: the first sale whose first attempt was sent after the kill and that was answered 2xx.
      const t0 = round.killedAt;
      const firstSale = [...load.ledger.sales.values()]
        .filter((s) => s.acked && (s.sentAt ?? 0) >= t0 && s.ackedAt !== undefined)
        .reduce((min, s) => Math.min(min, s.ackedAt!), Infinity);
      if (Number.isFinite(firstSale)) apiFirstWrites.push(firstSale - t0);
      await ctx.cluster.waitAllReady(120_000);
      await replaceCrashed(ctx, problems, event, `after the failover of ${round.killed}`);
      await sleep(5_000);
    }
  } catch (err) {
    problems.push(`the failover did not complete: ${(err as Error).message}`);
  }
  for (const r of rounds)
    if (r.firstWriteMs > FIRST_WRITE_TARGET_MS)
      problems.push(
        `after ${r.killed} was killed the first write took ${(r.firstWriteMs / 1000).toFixed(1)} s, past ${FIRST_WRITE_TARGET_MS / 1000} s`,
      );
  await Promise.all([load.stop(), exports.stop(), probe.stop()]);
  const sources = await exportSources(ctx);
  await replaceCrashed(ctx, problems, event, 'at the end of the failovers');
  const written = await probe.check();
  await probe.close();
  if (written.missing.length > 0)
    problems.push(`${written.missing.length} acknowledged inserts lost in the failovers: ${written.missing.slice(0, 20).join(', ')}`);
  // Nothing waits past the gateway's request timeout (it answers 504 then) plus a margin for the answer's way back.
  const limit = options.requestTimeoutMs + 2_000;
  const longest = Math.max(0, ...load.tally.latencies);
  if (longest > limit) problems.push(`a request took ${(longest / 1000).toFixed(1)} s, past the ${limit / 1000} s a request may take`);
  const hung = [...load.tally.outcomes.entries()].filter(([key]) => key.endsWith(' timeout'));
  if (hung.length > 0) problems.push(`requests without an answer within the client's 30 s: ${JSON.stringify(Object.fromEntries(hung))}`);
  const failed = Object.entries(Object.fromEntries(load.tally.failedOps));
  if (failed.length > 0) problems.push(`operations that failed after their retries: ${JSON.stringify(Object.fromEntries(failed))}`);
  const seconds = (ms: number[]) => ms.map((m) => (m / 1000).toFixed(1)).join(', ');
  const figures: Record<string, string | number> = {
    'kill to the first write acknowledged through the read-write endpoint (s, per failover)': seconds(rounds.map((r) => r.firstWriteMs)),
    'kill to the first write (s: median, max over the failovers)': `${median(rounds.map((r) => r.firstWriteMs / 1000)).toFixed(1)}, ${Math.max(0, ...rounds.map((r) => r.firstWriteMs / 1000)).toFixed(1)}`,
    'kill to the first sale answered 2xx whose first attempt followed the kill (s)': seconds(apiFirstWrites),
    'kill to the standby promoted (s)': seconds(rounds.map((r) => r.promotedMs)),
    'kill to the old primary back as the synchronous standby (s)': seconds(rounds.map((r) => r.rejoinedMs)),
    'probe inserts acknowledged, lost': `${written.acked}, ${written.missing.length}`,
    'probe inserts refused (by kind)': JSON.stringify(Object.fromEntries(probe.failures)),
    'longest probe insert (ms)': probe.longestMs,
    'standby replay lag while both ran (ms: median, p99, max; samples)': lagFigure(probe.replayLagMs),
    'standby replay lag (bytes of WAL: median, p99, max)': lagFigure(probe.replayLagBytes).replace(/; .*$/, ''),
    'longest request (ms), p99 (ms)': `${Math.round(longest)}, ${Math.round(load.tally.percentile(99))}`,
    'exports read from the replica, from the primary (erp_export_snapshots_total)': `${sources.replica}, ${sources.primary}`,
    'leader election': `Patroni ttl ${HA_TIMINGS.ttl} s, loop_wait ${HA_TIMINGS.loopWait} s, retry_timeout ${HA_TIMINGS.retryTimeout} s; HAProxy checks every ${HA_CHECK.interMs} ms`,
  };
  return { ...(await finish(ctx, 'failover', load, events, problems, figures, exports)), ledger: load.ledger };
}

function lagFigure(samples: number[]): string {
  if (samples.length === 0) return 'no samples';
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return `${Math.round(at(0.5))}, ${Math.round(at(0.99))}, ${Math.round(sorted[sorted.length - 1]!)}; ${sorted.length}`;
}

/** How many exports the owners read from the replica and from the primary, from their metrics. */
async function exportSources(ctx: ChaosContext): Promise<{ replica: number; primary: number }> {
  const totals = { replica: 0, primary: 0 };
  for (const name of ['inventory', 'sales', 'returns'] as const) {
    for (const replica of ctx.cluster.of(name)) {
      const text = await fetch(`${replica.opsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) }).then(
        (res) => res.text(),
        () => '',
      );
      for (const m of text.matchAll(/^erp_export_snapshots_total\{[^}]*source="(replica|primary)"[^}]*\} (\d+)/gm))
        totals[m[1] as 'replica' | 'primary'] += Number(m[2]);
    }
  }
  return totals;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
