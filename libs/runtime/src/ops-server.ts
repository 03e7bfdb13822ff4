import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A readiness check: resolves with a short status, throws when not ready. */
export type ReadinessCheck = () => Promise<string>;

/** A check that answers later than this counts as failed: a probe must not hang on a stuck dependency. */
const CHECK_TIMEOUT_MS = 2_000;

/** The checks /readyz runs, registered while the service starts. */
export interface ReadinessChecks {
  /** A check that must pass for /readyz (`required`), or that only reports a degraded state. */
  add(name: string, check: ReadinessCheck, options?: { required?: boolean }): void;
  /** Runs every check at once; ready when every required one passed. */
  run(): Promise<{ ready: boolean; results: Record<string, string> }>;
}

export function createReadinessChecks(): ReadinessChecks {
  const checks: Array<{ name: string; check: ReadinessCheck; required: boolean }> = [];
  return {
    add: (name, check, options) => void checks.push({ name, check, required: options?.required ?? true }),
    async run() {
      const results: Record<string, string> = {};
      let ready = true;
      await Promise.all(
        checks.map(async ({ name, check, required }) => {
          try {
            results[name] = await withTimeout(check(), CHECK_TIMEOUT_MS);
          } catch (err) {
            results[name] = `${required ? 'down' : 'degraded'}: ${(err as Error).message}`;
            if (required) ready = false;
          }
        }),
      );
      return { ready, results };
    },
  };
}

export interface OpsServerOptions {
  port: number;
  /** Every interface when undefined. */
  host: string | undefined;
  metrics: Registry;
  readiness: ReadinessChecks;
  /** True once the service stops: /readyz then answers 503 whatever its checks say. */
  stopping: () => boolean;
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The ops server every service runs: /healthz (the process answers), /readyz (every required
 * check passes and the service is not stopping) and /metrics (the Prometheus registry).
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const readiness = async (res: http.ServerResponse) => {
    const stopping = options.stopping();
    const { ready, results } = await options.readiness.run();
    if (stopping) results.shutdown = 'in progress';
    const answer = ready && !stopping;
    json(res, answer ? 200 : 503, { status: answer ? 'ready' : 'not ready', checks: results });
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/metrics') {
      res.setHeader('Content-Type', options.metrics.contentType);
      return res.end(await options.metrics.metrics());
    }
    if (path === '/readyz') return readiness(res);
    return json(res, 404, { status: 'not found' });
  };
  const server = http.createServer((req, res) => {
    void handle(req, res).catch(() => {
      res.statusCode = 500;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
