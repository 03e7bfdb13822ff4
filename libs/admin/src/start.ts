import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import pg from 'pg';
import { SERVICES, type ServiceName } from '@erp/contracts';
import { missingDependencies } from '@erp/testing';
import { connectAdminBus } from './connect';
import { seedFixture } from './seed';

/**
 * `npm start`: the whole stack on this machine, one process per service as in production.
 * Checks Postgres, NATS and Redis; creates the database; migrates every schema; starts the
 * services and the gateway; seeds the demo company unless it exists; prints a ready curl line;
 * stops everything cleanly on Ctrl-C.
 */
const ROOT = path.resolve(__dirname, '../../..');
const OPS_PORTS: Record<ServiceName, number> = {
  gateway: 9464,
  sales: 9465,
  inventory: 9466,
  returns: 9467,
  packages: 9468,
  'webhook-ingest': 9469,
  subscriptions: 9470,
  exports: 9471,
};

const env = {
  ...process.env,
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/erp',
  NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  SUBJECT_PREFIX: process.env.SUBJECT_PREFIX ?? 'erp',
  PORT: process.env.PORT ?? '8080',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  // Partner event subscriptions may point at a receiver on this machine.
  EVENTS_ALLOW_PRIVATE_URLS: process.env.EVENTS_ALLOW_PRIVATE_URLS ?? 'true',
  EVENTS_ALLOW_HTTP: process.env.EVENTS_ALLOW_HTTP ?? 'true',
};
const children = new Map<string, ChildProcess>();
let stopping = false;

function node(script: string, extraEnv: Record<string, string>, label: string): ChildProcess {
  const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', script], {
    cwd: ROOT,
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
      const res = await fetch(`http://127.0.0.1:${OPS_PORTS[name]}/readyz`);
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

async function main(): Promise<void> {
  const missing = await missingDependencies({ databaseUrl: env.DATABASE_URL, natsUrl: env.NATS_URL, redisUrl: env.REDIS_URL });
  if (missing.length > 0) {
    for (const line of missing) console.error(line);
    process.exit(1);
  }
  await ensureDatabase(env.DATABASE_URL);

  // Each service migrates only its own schema (in production: the chart's hook Job).
  const migrations = SERVICES.map((name) => ({
    name,
    child: node(`services/${name}/src/migrate.ts`, { LOG_LEVEL: 'warn' }, `${name}:migrate`),
  }));
  const codes = await Promise.all(migrations.map(({ child }) => exited(child)));
  const failed = migrations.filter((_, i) => codes[i] !== 0).map((m) => m.name);
  if (failed.length > 0) {
    console.error(`migrations failed: ${failed.join(', ')}`);
    process.exit(1);
  }

  for (const name of SERVICES) {
    const child = node(`services/${name}/src/main.ts`, { OPS_PORT: String(OPS_PORTS[name]), OTEL_SERVICE_NAME: name }, name);
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
  console.log(`
The stack is up: gateway on http://localhost:${env.PORT} (ops ports ${Object.values(OPS_PORTS).join(', ')}).
Demo company ${demo.existing ? 'already existed' : 'seeded'} (empresa id ${demo.id}); API key: ${key ?? '(kept from the first seeding)'}

  curl -s -H "Authorization: Bearer ${key}" http://localhost:${env.PORT}/api/external/v1/inventory/${productId}

Ctrl-C stops everything.`);
}

main().catch((err: unknown) => {
  console.error(`start failed: ${(err as Error).message}`);
  void stopAll(1);
});
