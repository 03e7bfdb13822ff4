import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { testCa } from './tls';

export interface SimRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  /** Serialised as JSON unless a string. */
  body?: unknown;
}

/** An HTTPS server on 127.0.0.1 with the test CA's server certificate, answering through `handle`. */
export async function listenHttps(
  handle: (req: SimRequest) => Promise<SimResponse> | SimResponse,
): Promise<{ server: Server; url: string }> {
  const { certPem, keyPem } = testCa();
  const server = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      void Promise.resolve()
        .then(() =>
          handle({
            method: req.method ?? 'GET',
            path: url.pathname,
            query: url.searchParams,
            headers: req.headers,
            body: Buffer.concat(chunks),
          }),
        )
        .catch((e: unknown): SimResponse => ({ status: 500, body: { message: e instanceof Error ? e.message : String(e) } }))
        .then((answer) => {
          const text = typeof answer.body === 'string' ? answer.body : answer.body === undefined ? '' : JSON.stringify(answer.body);
          res.writeHead(answer.status, { 'Content-Type': 'application/json; charset=UTF-8', ...answer.headers });
          res.end(text);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `https://127.0.0.1:${port}` };
}

export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * A `fetch` that trusts only the test CA (Node's global fetch reads `NODE_EXTRA_CA_CERTS` only at
 * start): for clients that take a fetch, such as `@shopify/admin-api-client`'s `customFetchApi`.
 */
export function caFetch(ca: string = testCa().caPem): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers = new Headers(init?.headers);
    const body = init?.body === undefined || init.body === null ? undefined : String(init.body as string);
    return new Promise<Response>((resolve, reject) => {
      const req = httpsRequest(url, { method: init?.method ?? 'GET', headers: Object.fromEntries(headers.entries()), ca }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: out }));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }) as typeof fetch;
}
