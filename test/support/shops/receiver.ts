import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A plain HTTP endpoint that records the webhooks a shop sends (a stand-in for `/api/webhook/...`
 * in tests that start only the simulator); `answer` decides each status.
 */
export async function webhookReceiver(answer: (r: Received) => number = () => 200): Promise<{
  url: string;
  received: Received[];
  setAnswer: (fn: (r: Received) => number) => void;
  close: () => Promise<void>;
}> {
  const received: Received[] = [];
  let decide = answer;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) };
      received.push(r);
      res.writeHead(decide(r), { 'Content-Type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    setAnswer: (fn) => {
      decide = fn;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
