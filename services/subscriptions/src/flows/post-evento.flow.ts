import http from 'node:http';
import https from 'node:https';
import { API_VERSION } from '@erp/contracts';
import { guardedLookup, urlShapeProblem, type UrlPolicy } from './url-guard';

/** Bytes of a receiver's answer read at most: the status decides, the body is only drained. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Receivers see which interface version sent a delivery (the minor version: the payloads' contract). */
export const USER_AGENT = `erp-partner-events/${API_VERSION.split('.').slice(0, 2).join('.')}`;

// Connections to a receiver are kept open between deliveries: a new TCP (and TLS) handshake per
// event would bound a subscription's throughput. The address check runs when a socket connects.
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) } as const;

export interface PostOutcome {
  /** The HTTP status answered, or null when there was none. */
  status: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * POSTs one signed delivery. Success is a 2xx within `timeoutMs`; redirects are not followed
 * (a 3xx is a failure), the URL's address is checked as the socket connects, and at most 64 KiB
 * of the answer is read.
 */
export async function postEvento(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: UrlPolicy & { timeoutMs: number },
): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const problem = urlShapeProblem(url, options);
  if (problem) return { status: null, error: problem, durationMs: 0 };
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<PostOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, durationMs: elapsed() });
    };
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': USER_AGENT,
          ...headers,
        },
        lookup: guardedLookup(options),
        agent: AGENTS[target.protocol as keyof typeof AGENTS],
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) {
            res.destroy();
            finish({ status: res.statusCode ?? null, error: null });
          }
        });
        res.on('end', () => finish({ status: res.statusCode ?? null, error: null }));
        res.on('error', () => finish({ status: res.statusCode ?? null, error: null }));
      },
    );
    const timer = setTimeout(() => {
      finish({ status: null, error: `Sin respuesta en ${options.timeoutMs} ms` });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        status: null,
        error: err.code === 'EPRIVATEADDRESS' ? err.message : `${err.code ?? 'ERROR'}: ${err.message}`.slice(0, 300),
      }),
    );
    req.end(body);
  });
}
