import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { reachable } from '@erp/testing';
import { sleep, waitFor } from './wait';

/**
 * Postgres, NATS (JetStream) and Redis of our own, on free loopback ports in a temp directory,
 * for the chaos run: restarting them must never touch the shared servers on the default ports
 * that every other test run on the machine (and CI) uses.
 */
export class PrivateInfra {
  private nats?: ChildProcess;
  private redis?: ChildProcess;
  private stopped = false;

  private constructor(
    readonly dir: string,
    readonly pgPort: number,
    readonly natsPort: number,
    readonly redisPort: number,
    private readonly pgBin: string,
  ) {}

  get databaseUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.pgPort}/postgres`;
  }
  get natsUrl(): string {
    return `nats://127.0.0.1:${this.natsPort}`;
  }
  get redisUrl(): string {
    return `redis://127.0.0.1:${this.redisPort}`;
  }

  static async start(): Promise<PrivateInfra> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'erp-chaos-'));
    const [pgPort, natsPort, redisPort] = [await freePort(), await freePort(), await freePort()];
    const infra = new PrivateInfra(dir, pgPort, natsPort, redisPort, postgresBinDir());
    // Whatever happens to the run, these servers die with it.
    process.once('exit', () => infra.killAllSync());
    infra.initPostgres();
    await infra.startPostgres();
    await infra.startNats();
    await infra.startRedis();
    return infra;
  }

  /** Kills Postgres as a crash would (no checkpoint, recovery from WAL on start), then starts it again. */
  async restartPostgres(downMs = 2_000): Promise<void> {
    this.pgCtl(['-m', 'immediate', '-w', 'stop']);
    await sleep(downMs);
    await this.startPostgres();
  }

  /** SIGKILL to nats-server, then a new one on the same port and JetStream store. */
  async restartNats(downMs = 2_000): Promise<void> {
    await killAndWait(this.nats, 'SIGKILL');
    await sleep(downMs);
    await this.startNats();
  }

  /** SIGKILL to redis-server, then a new empty one on the same port (counters are lost, as in a real crash without persistence). */
  async restartRedis(downMs = 2_000): Promise<void> {
    await killAndWait(this.redis, 'SIGKILL');
    await sleep(downMs);
    await this.startRedis();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all([killAndWait(this.nats, 'SIGTERM'), killAndWait(this.redis, 'SIGTERM')]);
    this.pgCtl(['-m', 'fast', '-w', 'stop'], { allowFailure: true });
    rmSync(this.dir, { recursive: true, force: true });
  }

  private get pgData(): string {
    return path.join(this.dir, 'pg');
  }

  private initPostgres(): void {
    mkdirSync(this.pgData);
    // Postgres refuses to run as root: as root, its files and processes belong to the postgres user.
    if (isRoot()) {
      chownSync(this.dir, uidOf('postgres'), gidOf('postgres'));
      chownSync(this.pgData, uidOf('postgres'), gidOf('postgres'));
    }
    this.asPostgres(path.join(this.pgBin, 'initdb'), ['-D', this.pgData, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  }

  private async startPostgres(): Promise<void> {
    // fsync off is safe here: the crash is the server's, not the machine's, so the OS keeps what was written.
    // Commits stay synchronous: an acknowledged commit must survive the crash, as in production.
    const options = [
      `-p ${this.pgPort}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c max_connections=400',
      '-c fsync=off',
      '-c full_page_writes=off',
    ];
    this.pgCtl(['-o', options.join(' '), '-l', path.join(this.dir, 'postgres.log'), '-w', '-t', '60', 'start']);
    await waitFor(() => reachable(this.databaseUrl, 500), 30_000, 'private Postgres');
  }

  private pgCtl(args: string[], options: { allowFailure?: boolean } = {}): void {
    try {
      this.asPostgres(path.join(this.pgBin, 'pg_ctl'), ['-D', this.pgData, ...args]);
    } catch (err) {
      if (!options.allowFailure) throw err;
    }
  }

  private asPostgres(command: string, args: string[]): void {
    const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: 'pipe', cwd: this.dir });
  }

  private async startNats(): Promise<void> {
    const store = path.join(this.dir, 'nats');
    const log = openSync(path.join(this.dir, 'nats.log'), 'a');
    this.nats = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(this.natsPort), '-sd', store], {
      stdio: ['ignore', log, log],
    });
    await waitFor(() => reachable(this.natsUrl, 500), 30_000, 'private NATS');
  }

  private async startRedis(): Promise<void> {
    const log = openSync(path.join(this.dir, 'redis.log'), 'a');
    this.redis = spawn('redis-server', ['--port', String(this.redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', log, log],
    });
    await waitFor(() => reachable(this.redisUrl, 500), 30_000, 'private Redis');
  }

  private killAllSync(): void {
    if (this.stopped) return;
    for (const child of [this.nats, this.redis]) if (child && child.exitCode === null) child.kill('SIGKILL');
    if (existsSync(path.join(this.pgData, 'postmaster.pid'))) {
      const [file, argv] = isRoot()
        ? ['runuser', ['-u', 'postgres', '--', path.join(this.pgBin, 'pg_ctl'), '-D', this.pgData, '-m', 'immediate', 'stop']]
        : [path.join(this.pgBin, 'pg_ctl'), ['-D', this.pgData, '-m', 'immediate', 'stop']];
      spawnSync(file, argv, { stdio: 'ignore' });
    }
  }
}

/** Whether the tools the chaos run needs are installed: Postgres server binaries, nats-server, redis-server. */
export function privateInfraMissing(): string[] {
  const missing: string[] = [];
  try {
    postgresBinDir();
  } catch {
    missing.push('Postgres server binaries (initdb, pg_ctl)');
  }
  for (const tool of ['nats-server', 'redis-server']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).error) missing.push(tool);
  }
  if (isRoot() && spawnSync('id', ['postgres'], { stdio: 'ignore' }).status !== 0)
    missing.push('a postgres user (Postgres does not run as root)');
  return missing;
}

function postgresBinDir(): string {
  const fromEnv = process.env.PG_BIN_DIR;
  if (fromEnv && existsSync(path.join(fromEnv, 'initdb'))) return fromEnv;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin');
  }
  const found = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const dir = found.stdout?.trim();
  if (dir && existsSync(path.join(dir, 'initdb'))) return dir;
  throw new Error('Postgres server binaries not found (set PG_BIN_DIR)');
}

const isRoot = () => process.getuid?.() === 0;
const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
const gidOf = (user: string) => Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());

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

async function killAndWait(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}
