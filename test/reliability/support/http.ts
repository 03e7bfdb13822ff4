/** What one HTTP attempt got: a status and body, or (status 0) the network error that stood in for them. */
export interface Attempt {
  status: number;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: Headers;
  ms: number;
  /** With status 0: ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET, timeout… */
  error?: string;
}

export interface CallInit {
  method?: string;
  key?: string;
  headers?: Record<string, string>;
  /** A JSON value (serialised), or a string / Buffer sent as is. */
  json?: unknown;
  body?: string | Buffer;
  timeoutMs?: number;
}

/** One HTTP request with a deadline; never throws: a network problem is an attempt with status 0. */
export async function call(url: string, init: CallInit = {}): Promise<Attempt> {
  const started = performance.now();
  const headers: Record<string, string> = { ...(init.key ? { Authorization: `Bearer ${init.key}` } : {}), ...init.headers };
  let body: string | Buffer | undefined = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['Content-Type'] ??= 'application/json';
  }
  try {
    const res = await fetch(url, { method: init.method ?? 'GET', headers, body, signal: AbortSignal.timeout(init.timeoutMs ?? 30_000) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text for the checks to complain about
    }
    return { status: res.status, body: parsed, text, headers: res.headers, ms: performance.now() - started };
  } catch (err) {
    return { status: 0, error: networkCode(err), body: undefined, text: '', headers: new Headers(), ms: performance.now() - started };
  }
}

function networkCode(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  if (e.name === 'TimeoutError' || e.cause?.name === 'TimeoutError') return 'timeout';
  return e.cause?.code ?? e.code ?? e.name ?? 'network-error';
}

/** Statuses a careful client retries (with the same idempotency key): the request may not have been processed. */
export const RETRYABLE = new Set([0, 502, 503, 504]);

/** Counts of what was sent and what came back, per operation and overall. */
export class Tally {
  /** Attempts per operation. */
  readonly sent = new Map<string, number>();
  /** Answers by `operation status`, network failures by `operation error`. */
  readonly outcomes = new Map<string, number>();
  /** Logical operations (after retries) that ended without a 2xx or an expected refusal. */
  readonly failedOps = new Map<string, number>();
  /** Refusals (4xx) by `operation status reason`: why, not only that, a request was refused. */
  readonly reasons = new Map<string, number>();
  readonly latencies: number[] = [];

  record(op: string, attempt: Attempt): void {
    this.sent.set(op, (this.sent.get(op) ?? 0) + 1);
    const key = attempt.status === 0 ? `${op} ${attempt.error}` : `${op} ${attempt.status}`;
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
    if (attempt.status >= 400 && attempt.status < 500) {
      const reason = `${key} ${typeof attempt.body?.reason === 'string' ? attempt.body.reason : 'without a reason'}`;
      this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
    }
    if (this.latencies.length < 200_000) this.latencies.push(attempt.ms);
  }

  fail(op: string): void {
    this.failedOps.set(op, (this.failedOps.get(op) ?? 0) + 1);
  }

  get total(): number {
    return [...this.sent.values()].reduce((a, b) => a + b, 0);
  }
  get answered(): number {
    return [...this.outcomes.entries()].filter(([k]) => /\s\d{3}$/.test(k)).reduce((a, [, n]) => a + n, 0);
  }
  /** The counts by status so far, to compare with later (`since`). */
  snapshot(): Record<string, number> {
    return this.byStatus();
  }
  /** Answers and network failures by status since `before` (a `snapshot`). */
  since(before: Record<string, number>): Record<string, number> {
    const now = this.byStatus();
    return Object.fromEntries(
      Object.entries(now).flatMap(([status, n]) => (n > (before[status] ?? 0) ? [[status, n - (before[status] ?? 0)]] : [])),
    );
  }
  /** Answers and network failures by status (or error code), over every operation. */
  byStatus(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, n] of this.outcomes) {
      const status = key.slice(key.lastIndexOf(' ') + 1);
      out[status] = (out[status] ?? 0) + n;
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
  }
  percentile(p: number): number {
    if (this.latencies.length === 0) return 0;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  }
  merge(other: Tally): void {
    for (const [k, n] of other.sent) this.sent.set(k, (this.sent.get(k) ?? 0) + n);
    for (const [k, n] of other.outcomes) this.outcomes.set(k, (this.outcomes.get(k) ?? 0) + n);
    for (const [k, n] of other.failedOps) this.failedOps.set(k, (this.failedOps.get(k) ?? 0) + n);
    for (const [k, n] of other.reasons) this.reasons.set(k, (this.reasons.get(k) ?? 0) + n);
    for (const ms of other.latencies) if (this.latencies.length < 200_000) this.latencies.push(ms);
  }
  /** Answers that were not 2xx (and network failures), by operation and status. */
  notOk(): Record<string, number> {
    return Object.fromEntries([...this.outcomes.entries()].filter(([key]) => !/ 2\d\d$/.test(key)).sort(([a], [b]) => a.localeCompare(b)));
  }
  /** One line: sent, answered, by status, failed operations, and the reasons of the refusals. */
  summary(): string {
    const failed = [...this.failedOps.entries()].map(([op, n]) => `${op}: ${n}`).join(', ') || 'none';
    const reasons = [...this.reasons.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([refusal, n]) => `${refusal}: ${n}`)
      .join(', ');
    return `sent ${this.total}, answered ${this.answered}, by status ${JSON.stringify(this.byStatus())}, failed operations after retries: ${failed}${reasons ? `; refusals: ${reasons}` : ''}`;
  }
}
