import net from 'node:net';
import { reachable } from '@erp/runtime';
import { until } from './eventually';

/**
 * A loopback port nothing listens on at the moment: for a server the test starts, or for a
 * connection that must be refused.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on the loopback port (a server the test spawned). */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  await until(() => reachable(`tcp://127.0.0.1:${port}`), timeoutMs, 50, `a listener on port ${port}`);
}
