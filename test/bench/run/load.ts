import { readFile, writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';

export interface LoadRequest {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: string;
  /** Added to the run's headers for this request. */
  headers?: Record<string, string>;
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  duration: number;
  /** A fixed number of requests instead of a duration (a burst). */
  amount?: number;
  /** Called for every request, so each one can have its own path and body. */
  next: () => LoadRequest;
}

export interface LoadResult {
  requests: number;
  /** Mean requests per second over the run. */
  rps: number;
  p50: number;
  p99: number;
  /** Responses outside 2xx. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  seconds: number;
  statusCodes: Record<string, number>;
}

/** One bounded autocannon run on loopback; every request is built by `next()`. */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const first = o.next();
  // Paths are relative to the URL's own path (the API base, or the baseline's root).
  const base = new URL(o.url).pathname.replace(/\/$/, '');
  const result = await autocannon({
    url: o.url,
    connections: o.connections,
    ...(o.amount !== undefined ? { amount: o.amount } : { duration: o.duration }),
    timeout: 30,
    headers: o.headers,
    method: first.method,
    requests: [
      {
        setupRequest: (req) => {
          const r = o.next();
          return {
            ...req,
            method: r.method,
            path: `${base}${r.path}`,
            ...(r.body !== undefined ? { body: r.body } : {}),
            ...(r.headers ? { headers: { ...req.headers, ...r.headers } } : {}),
          };
        },
      },
    ],
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = (stats as { count: number }).count;
  const completed = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  return {
    requests: completed,
    rps: result.duration > 0 ? completed / result.duration : 0,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: result.duration,
    statusCodes,
  };
}

/**
 * The largest resident set of each process while `run` goes, exactly: the kernel's high-water
 * mark (`VmHWM` in /proc/<pid>/status) is reset to the current resident set before (`5` written
 * to /proc/<pid>/clear_refs) and read after. Nothing is asked of the processes, so measuring adds
 * no work to them, and a peak between two samples is not missed. Linux only.
 */
export async function withPeakRss<T>(
  processes: readonly MeasuredProcess[],
  run: () => Promise<T>,
): Promise<{ value: T; rss: Record<string, number> }> {
  await Promise.all(processes.map((p) => writeFile(`/proc/${pidOf(p)}/clear_refs`, '5')));
  const value = await run();
  const rss: Record<string, number> = {};
  for (const p of processes) {
    const status = await readFile(`/proc/${pidOf(p)}/status`, 'utf8');
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status);
    if (!kb) throw new Error(`/proc/${pidOf(p)}/status of ${p.name} has no VmHWM line`);
    rss[p.name] = Number(kb[1]) * 1024;
  }
  return { value, rss };
}

/** A process the benchmark reads from /proc. */
type MeasuredProcess = { name: string; child: { pid?: number } };

function pidOf(p: MeasuredProcess): number {
  if (p.child.pid === undefined) throw new Error(`${p.name} has no process to measure`);
  return p.child.pid;
}

/** Clock ticks of /proc/<pid>/stat's CPU times: USER_HZ, 100 a second in Linux's ABI. */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time (user and system) each process has used since it started, seconds: fields 14 and
 * 15 of /proc/<pid>/stat, read after the command name (which may hold spaces, in parentheses).
 * Two readings around a run say what the run cost each process, however busy the machine was.
 * Linux only.
 */
export async function cpuSeconds(processes: readonly MeasuredProcess[]): Promise<Record<string, number>> {
  const used: Record<string, number> = {};
  for (const p of processes) {
    const stat = await readFile(`/proc/${pidOf(p)}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the name: state (field 3) first, so utime (14) and stime (15) are the 12th and 13th.
    const [utime, stime] = [Number(fields[11]), Number(fields[12])];
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`/proc/${pidOf(p)}/stat of ${p.name} has no CPU times`);
    used[p.name] = (utime + stime) / TICKS_PER_SECOND;
  }
  return used;
}

/** What each process used between two `cpuSeconds` readings. */
export function cpuBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([name, seconds]) => [name, seconds - (before[name] ?? 0)]));
}

/** Handler time of one NATS subject in one service during a run. */
export interface HandlerTime {
  service: string;
  subject: string;
  count: number;
  meanMs: number;
}

type HandlerTotals = Map<string, { service: string; subject: string; sum: number; count: number }>;

/** Every service's `erp_bus_handler_duration_seconds` sums and counts, by subject. */
export async function scrapeHandlerTotals(opsPorts: Record<string, number>): Promise<HandlerTotals> {
  const totals: HandlerTotals = new Map();
  await Promise.all(
    Object.entries(opsPorts).map(async ([service, port]) => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) })).text().catch(() => '');
      for (const m of text.matchAll(/^erp_bus_handler_duration_seconds_(sum|count)\{([^}]*)\}\s+(\S+)/gm)) {
        const subject = /subject="([^"]*)"/.exec(m[2]!)?.[1];
        if (!subject) continue;
        const key = `${service} ${subject}`;
        const entry = totals.get(key) ?? { service, subject, sum: 0, count: 0 };
        if (m[1] === 'sum') entry.sum += Number(m[3]);
        else entry.count += Number(m[3]);
        totals.set(key, entry);
      }
    }),
  );
  return totals;
}

/**
 * Where the time of a run went inside the services: the mean handler time of each subject
 * handled during it (after − before), slowest first. A rough profile of the NATS hops.
 */
export function handlerTimes(before: HandlerTotals, after: HandlerTotals): HandlerTime[] {
  const out: HandlerTime[] = [];
  for (const [key, a] of after) {
    const b = before.get(key);
    const count = a.count - (b?.count ?? 0);
    if (count <= 0) continue;
    out.push({ service: a.service, subject: a.subject, count, meanMs: ((a.sum - (b?.sum ?? 0)) * 1000) / count });
  }
  return out.sort((x, y) => y.meanMs - x.meanMs);
}
