import net from 'node:net';

export interface DependencyUrls {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
}

const DEFAULT_PORTS: Record<string, number> = { 'postgres:': 5432, 'postgresql:': 5432, 'nats:': 4222, 'redis:': 6379 };

const HOW_TO_START: Record<keyof DependencyUrls, string> = {
  databaseUrl: 'Postgres: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start (or set DATABASE_URL)',
  natsUrl: 'NATS with JetStream: nats-server -js -a 127.0.0.1 -p 4222 (or set NATS_URL)',
  redisUrl: 'Redis: redis-server --port 6379 --save "" --appendonly no (or set REDIS_URL)',
};

/** Whether something accepts TCP connections at the URL's host and port. */
export async function reachable(url: string, timeoutMs = 1_000): Promise<boolean> {
  const parsed = new URL(url);
  const port = Number(parsed.port || DEFAULT_PORTS[parsed.protocol] || 0);
  return new Promise((resolve) => {
    const socket = net.connect({ host: parsed.hostname.replace(/^\[|\]$/g, ''), port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** One line per unreachable dependency, saying which and how to start it; empty when all answer. */
export async function missingDependencies(urls: DependencyUrls): Promise<string[]> {
  const keys = Object.keys(HOW_TO_START) as Array<keyof DependencyUrls>;
  const up = await Promise.all(keys.map((k) => reachable(urls[k])));
  return keys.filter((_, i) => !up[i]).map((k) => `${withoutPassword(urls[k])} is unreachable. Start ${HOW_TO_START[k]}`);
}

/** The URL as given, its password (if any) masked: the line is printed. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password === '') return url;
  parsed.password = '***';
  return parsed.toString();
}
