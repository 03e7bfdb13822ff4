import { createHash } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import net from 'node:net';
import readline from 'node:readline';
import pg from 'pg';
import { SERVICES, databaseUrlOf, readDatabaseUrlOf, type ServiceName } from '@erp/contracts';
import { missingDependencies } from '@erp/runtime';
import { seedFixture } from '@erp/back-office';
import { connectAdminBus } from './connect';

/**
 * `npm start`: the whole stack on this machine, one process per service as in production.
 * Checks Postgres, NATS and Redis; creates the database; migrates every schema; starts the
 * services and the gateway; seeds the demo company unless it exists; prints a ready curl line;
 * stops everything cleanly on Ctrl-C.
 */
const ROOT = path.resolve(__dirname, '../../..');
/** The gateway's port when PORT is not set; each ops port is the gateway's + OPS_OFFSET + the service's index (9464, 9465… by default). */
const DEFAULT_PORT = 8080;
const OPS_OFFSET = 1384;

const env = {
  ...process.env,
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/erp',
  NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  SUBJECT_PREFIX: process.env.SUBJECT_PREFIX ?? 'erp',
  // A development stack answers this machine only; BIND_ADDRESS=0.0.0.0 opens it to the network.
  BIND_ADDRESS: process.env.BIND_ADDRESS ?? '127.0.0.1',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  // Partner event subscriptions may point at a receiver on this machine.
  EVENTS_ALLOW_PRIVATE_URLS: process.env.EVENTS_ALLOW_PRIVATE_URLS ?? 'true',
  EVENTS_ALLOW_HTTP: process.env.EVENTS_ALLOW_HTTP ?? 'true',
  // Shop credentials of the development stack are sealed with a key fixed here (a deployment's comes
  // from a Secret), so integrations given a shop API in one run can still be read in the next.
  PLATFORM_CREDENTIALS_KEYS:
    process.env.PLATFORM_CREDENTIALS_KEYS ?? `dev:${createHash('sha256').update('erp development stack').digest('base64')}`,
};
/** Filled by `choosePorts` before anything starts. */
const ports = { gateway: 0, ops: {} as Record<ServiceName, number> };
const children = new Map<string, ChildProcess>();
let stopping = false;

function node(script: string, extraEnv: Record<string, string | undefined>, label: string): ChildProcess {
  const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', script], {
    cwd: ROOT,
    // A key given as undefined is left out of the child's environment.
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream! }).on('line', (line) => console.log(`[${label}] ${line}`));
  }
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));

async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const client = new pg.Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`create database "${name.replace(/"/g, '""')}"`);
      console.log(`created database ${name}`);
    }
  } finally {
    await client.end();
  }
}

async function waitReady(name: ServiceName, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (stopping) throw new Error('stopping');
    try {
      const res = await fetch(`http://${connectHost()}:${ports.ops[name]}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not become ready in ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    console.log('\nstopping…');
    await Promise.all(
      [...children.values()].map((child) => {
        if (child.exitCode !== null) return Promise.resolve(0);
        child.kill('SIGTERM');
        return exited(child);
      }),
    );
  }
  process.exit(code);
}

/**
 * The gateway on PORT (8080 when unset) and the ops ports beside it (PORT + 1384 + i), or free
 * ones all when PORT=0. Each is tried first, so a port in use is named with whose it would have
 * been, before anything starts.
 */
async function choosePorts(): Promise<string | undefined> {
  const raw = process.env.PORT ?? String(DEFAULT_PORT);
  const base = Number(raw);
  if (!Number.isInteger(base) || base < 0 || base > 65535 - OPS_OFFSET - SERVICES.length)
    return `PORT=${raw} is not a port this stack can use (0 for free ports, or up to ${65535 - OPS_OFFSET - SERVICES.length})`;
  const wanted: Array<[string, number]> = [
    ['the gateway', base],
    ...SERVICES.map((name, i): [string, number] => [`the ops port of ${name}`, base === 0 ? 0 : base + OPS_OFFSET + i]),
  ];
  const got: number[] = [];
  for (const [role, port] of wanted) {
    const free = await tryPort(port);
    if (free === undefined)
      return `port ${port} (${role}) on ${env.BIND_ADDRESS} is taken: stop what uses it, or start with PORT=<another> (the ops ports follow it) or PORT=0 (free ports)`;
    got.push(free);
  }
  ports.gateway = got[0]!;
  SERVICES.forEach((name, i) => (ports.ops[name] = got[i + 1]!));
  return undefined;
}

/** Listens on `port` (0: one the system picks) and lets it go: the port, or undefined when it is taken. */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, env.BIND_ADDRESS, () => {
      const chosen = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(chosen));
    });
  });
}

/** Where this process reaches what it started: the bound address, or loopback when it is every interface. */
function connectHost(): string {
  const address = env.BIND_ADDRESS;
  if (address === '0.0.0.0' || address === '::') return '127.0.0.1';
  return address.includes(':') ? `[${address}]` : address;
}

async function main(): Promise<void> {
  const portProblem = await choosePorts();
  if (portProblem) {
    console.error(portProblem);
    process.exit(1);
  }
  // A service whose schema lives in a database of its own gets it from DATABASE_URL_<SCHEMA>.
  const databaseOf = (name: ServiceName) => databaseUrlOf(name, env, env.DATABASE_URL);
  for (const databaseUrl of new Set(SERVICES.map(databaseOf))) {
    const missing = await missingDependencies({ databaseUrl, natsUrl: env.NATS_URL, redisUrl: env.REDIS_URL });
    if (missing.length > 0) {
      for (const line of missing) console.error(line);
      process.exit(1);
    }
    await ensureDatabase(databaseUrl);
  }

  // Each service migrates only its own schema (in production: the chart's hook Job).
  const migrations = SERVICES.map((name) => ({
    name,
    child: node(`services/${name}/src/migrate.ts`, { LOG_LEVEL: 'warn', DATABASE_URL: databaseOf(name) }, `${name}:migrate`),
  }));
  const codes = await Promise.all(migrations.map(({ child }) => exited(child)));
  const failed = migrations.filter((_, i) => codes[i] !== 0).map((m) => m.name);
  if (failed.length > 0) {
    console.error(`migrations failed: ${failed.join(', ')}`);
    process.exit(1);
  }

  for (const name of SERVICES) {
    const child = node(
      `services/${name}/src/main.ts`,
      {
        PORT: String(ports.gateway),
        OPS_PORT: String(ports.ops[name]),
        OTEL_SERVICE_NAME: name,
        DATABASE_URL: databaseOf(name),
        DATABASE_URL_READ: readDatabaseUrlOf(name, env),
        // The shops of a development stack deliver to this gateway.
        PLATFORM_WEBHOOK_BASE_URL: process.env.PLATFORM_WEBHOOK_BASE_URL ?? `http://${connectHost()}:${ports.gateway}`,
      },
      name,
    );
    children.set(name, child);
    void exited(child).then((code) => {
      if (!stopping) {
        console.error(`${name} exited with code ${code}; stopping the stack`);
        void stopAll(1);
      }
    });
  }
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));
  await Promise.all(SERVICES.map((name) => waitReady(name)));

  const bus = await connectAdminBus(env);
  const fixture = JSON.parse(await readFile(path.join(ROOT, 'test/fixtures/demo.json'), 'utf8'));
  const seeded = await seedFixture(bus, fixture);
  await bus.drain();
  const demo = seeded.empresas.demo!;
  const key = Object.values(demo.api_keys)[0];
  const productos = demo.productos as Record<string, number> | undefined;
  const productId = productos ? Object.values(productos)[0] : 1;
  const gatewayUrl = `http://${connectHost()}:${ports.gateway}`;
  console.log(`
The stack is up: gateway on ${gatewayUrl} (ops ports ${SERVICES.map((name) => `${name} ${ports.ops[name]}`).join(', ')}).
Demo company ${demo.existing ? 'already existed' : 'seeded'} (empresa id ${demo.id}); API key: ${key ?? '(kept from the first seeding)'}

  curl -s -H "Authorization: Bearer ${key}" ${gatewayUrl}/api/external/v1/inventory/${productId}

Ctrl-C stops everything.`);
}

main().catch((err: unknown) => {
  console.error(`start failed: ${(err as Error).message}`);
  void stopAll(1);
});
