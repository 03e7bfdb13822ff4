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
 * The largest resident set of each service while `run` goes: every service's ops port is
 * scraped once a second for `process_resident_memory_bytes`.
 */
export async function withRssSampling<T>(
  opsPorts: Record<string, number>,
  run: () => Promise<T>,
): Promise<{ value: T; rss: Record<string, number> }> {
  const rss: Record<string, number> = Object.fromEntries(Object.keys(opsPorts).map((name) => [name, 0]));
  const sample = async (): Promise<void> => {
    await Promise.all(
      Object.entries(opsPorts).map(async ([name, port]) => {
        try {
          const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
          const match = /^process_resident_memory_bytes(?:\{[^}]*\})?\s+(\S+)/m.exec(text);
          if (match) rss[name] = Math.max(rss[name] ?? 0, Number(match[1]));
        } catch {
          // a missed sample under load is not a failure of the run
        }
      }),
    );
  };
  await sample();
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(sample);
  }, 1_000);
  try {
    const value = await run();
    return { value, rss };
  } finally {
    clearInterval(timer);
    await sampling;
    await sample();
  }
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
