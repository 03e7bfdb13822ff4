import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { SERVICES, type ServiceName } from '@erp/contracts';
import { imageEnv } from '../../support/dockerfile';

const ROOT = path.resolve(__dirname, '../../..');
/** The images' environment, read from the Dockerfile once. */
let runtimeEnv: Record<string, string> | undefined;

export interface BenchProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number>;
  /** Wall-clock time of the exit (ms), once it happened. */
  exitedAt?: number;
}

/**
 * Starts an entry point as its own process, its output in a log file: a TypeScript one through
 * tsx (as `npm start` does), a built `.js` one with plain node and the images' environment.
 */
export function startProcess(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  logDir: string,
  nodeArgs: readonly string[] = [],
): BenchProcess {
  const logFile = path.join(logDir, `${name}.log`);
  const log = createWriteStream(logFile);
  const built = !script.endsWith('.ts');
  const loader = built ? [] : ['--conditions=development', '--import', 'tsx'];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, script], {
    cwd: ROOT,
    env: built ? { ...env, ...(runtimeEnv ??= imageEnv()) } : env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const proc: BenchProcess = { name, child, logFile, exited: Promise.resolve(0) };
  proc.exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => {
      proc.exitedAt = Date.now();
      log.end();
      resolve(code ?? (signal ? 128 : 0));
    }),
  );
  return proc;
}

async function tail(file: string, lines = 15): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Polls `url` until it answers 2xx; fails early, with the end of its log, if the process exits. */
export async function waitHealthy(proc: BenchProcess, url: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | undefined;
  void proc.exited.then((code) => (exitCode = code));
  for (;;) {
    if (exitCode !== undefined) throw new Error(`${proc.name} exited with ${exitCode} while starting:\n${await tail(proc.logFile)}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${proc.name} was not ready after ${timeoutMs / 1000} s:\n${await tail(proc.logFile)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** SIGTERM (the services drain), then SIGKILL after the deadline; resolves when every process is gone. */
export async function stopProcesses(procs: readonly BenchProcess[], deadlineMs = 30_000): Promise<void> {
  await Promise.all(
    procs.map(async (p) => {
      if (p.child.exitCode !== null || p.child.signalCode !== null) return;
      p.child.kill('SIGTERM');
      const timer = setTimeout(() => p.child.kill('SIGKILL'), deadlineMs);
      await p.exited;
      clearTimeout(timer);
    }),
  );
}

export interface StackOptions {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  gatewayPort: number;
  /** Ops ports are this, +1, … in the order of SERVICES. */
  opsPortBase: number;
  /** NATS subject and Redis key prefix: two runs on one NATS server with the same prefix would answer each other's requests. */
  prefix: string;
  logLevel: string;
  logDir: string;
  /** Write a V8 CPU profile of each service (and the baseline) into this folder when it stops. */
  profileDir?: string;
}

export interface Stack {
  gatewayUrl: string;
  opsPorts: Record<ServiceName, number>;
  processes: BenchProcess[];
  stop(): Promise<void>;
}

/** Compiles every lib and service to its dist/ folder (`npm run build`), as an image build does. */
export async function buildServices(): Promise<void> {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: ROOT }).catch((err: { stdout?: string }) => {
    throw new Error(`the build failed:\n${err.stdout ?? String(err)}`);
  });
}

/**
 * Migrates every schema and starts every service from its build, one process each, with
 * NODE_ENV=production as in the images, against the bench
 * database with the subject and key prefix `bench` (or `--prefix`), on their own ports (beside a running
 * `npm start`), the hourly quota lifted so the load is never refused.
 */
export async function startStack(o: StackOptions): Promise<Stack> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: o.databaseUrl,
    NATS_URL: o.natsUrl,
    REDIS_URL: o.redisUrl,
    SUBJECT_PREFIX: o.prefix,
    REDIS_KEY_PREFIX: o.prefix,
    NODE_ENV: 'production',
    PORT: String(o.gatewayPort),
    LOG_LEVEL: o.logLevel,
    RATE_LIMIT_STANDARD: '1000000000',
    RATE_LIMIT_DATE_FILTERED: '1000000000',
    // The partner events scenario's receiver listens on loopback.
    EVENTS_ALLOW_PRIVATE_URLS: 'true',
    EVENTS_ALLOW_HTTP: 'true',
  };
  const migrations = SERVICES.map((name) => startProcess(`${name}-migrate`, `services/${name}/dist/migrate.js`, env, o.logDir));
  const codes = await Promise.all(migrations.map((m) => m.exited));
  const failed = migrations.filter((_, i) => codes[i] !== 0);
  if (failed.length > 0) throw new Error(`migrations failed: ${failed.map((m) => `${m.name} (see ${m.logFile})`).join(', ')}`);

  const opsPorts = Object.fromEntries(SERVICES.map((name, i) => [name, o.opsPortBase + i])) as Record<ServiceName, number>;
  const processes = SERVICES.map((name) =>
    startProcess(
      name,
      `services/${name}/dist/main.js`,
      { ...env, OPS_PORT: String(opsPorts[name]), OTEL_SERVICE_NAME: name },
      o.logDir,
      profilingArgs(o.profileDir, name),
    ),
  );
  const stop = () => stopProcesses(processes);
  try {
    await Promise.all(processes.map((p) => waitHealthy(p, `http://127.0.0.1:${opsPorts[p.name as ServiceName]}/readyz`)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { gatewayUrl: `http://127.0.0.1:${o.gatewayPort}`, opsPorts, processes, stop };
}

/**
 * `--cpu-prof` for one process, into a folder of its own: each thread (the main one, and the one
 * running tsx's module hooks) writes its profile there when the process exits.
 */
function profilingArgs(profileDir: string | undefined, name: string): string[] {
  return profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, name)}`] : [];
}

export interface Baseline {
  url: string;
  process: BenchProcess;
  stop(): Promise<void>;
}

export async function startBaseline(o: {
  databaseUrl: string;
  empresaId: number;
  port: number;
  logDir: string;
  profileDir?: string;
}): Promise<Baseline> {
  const env = { ...process.env, DATABASE_URL: o.databaseUrl, BASELINE_EMPRESA_ID: String(o.empresaId), BASELINE_PORT: String(o.port) };
  const proc = startProcess('baseline', 'test/bench/run/baseline-server.ts', env, o.logDir, profilingArgs(o.profileDir, 'baseline'));
  const url = `http://127.0.0.1:${o.port}`;
  try {
    await waitHealthy(proc, `${url}/healthz`, 30_000);
  } catch (err) {
    await stopProcesses([proc]);
    throw err;
  }
  return { url, process: proc, stop: () => stopProcesses([proc]) };
}
