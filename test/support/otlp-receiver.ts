import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpReceiver {
  url: string;
  close(): Promise<void>;
}

/**
 * A minimal OTLP/HTTP (JSON) receiver on a free loopback port: hands each export's path and body
 * to `onExport` and answers it as a collector does.
 */
export function startOtlpReceiver(onExport: (path: string, body: string) => void): Promise<OtlpReceiver> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      onExport(req.url ?? '', body);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise((done) => server.close(() => done())),
      }),
    ),
  );
}
