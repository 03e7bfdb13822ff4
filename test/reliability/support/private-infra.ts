import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reachable } from '@erp/runtime';
import { freePort } from '@erp/testing';
import { sleep, waitFor } from './wait';

/** Subject prefix, Redis key prefix and NATS cluster name of the chaos run. */
export const CHAOS_PREFIX = 'chaos';

/** One Postgres server of our own: its data directory, port and socket in the run's temp directory. */
export class PrivatePostgres {
  constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    /** Settings (`name=value`) over the defaults of `start`, e.g. `shared_preload_libraries=pg_stat_statements`. */
    private readonly settings: readonly string[] = [],
  ) {}

  /** A new server in `dir` (created), on a free port, started; `settings` (`name=value`) over the defaults. */
  static async start(dir: string, settings: readonly string[] = []): Promise<PrivatePostgres> {
    const server = new PrivatePostgres(dir, await freePort(), postgresBinDir(), settings);
    server.init();
    await server.start();
    return server;
  }

  /** A database of this server (`postgres` unless told). */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  init(): void {
    mkdirSync(this.dir, { recursive: true });
    // Postgres refuses to run as root: as root, its files and processes belong to the postgres user.
    if (isRoot()) {
      chownSync(path.dirname(this.dir), uidOf('postgres'), gidOf('postgres'));
      chownSync(this.dir, uidOf('postgres'), gidOf('postgres'));
    }
    this.asPostgres(path.join(this.bin, 'initdb'), ['-D', this.data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  }

  async start(): Promise<void> {
    // fsync off is safe here: the crash is the server's, not the machine's, so the OS keeps what was written.
    // Commits stay synchronous: an acknowledged commit must survive the crash, as in production.
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c max_connections=400',
      '-c fsync=off',
      '-c full_page_writes=off',
      // Given later on the command line, these win over the defaults above.
      ...this.settings.map((setting) => `-c ${setting}`),
    ];
    this.pgCtl(['-o', options.join(' '), '-l', path.join(this.dir, 'postgres.log'), '-w', '-t', '60', 'start']);
    await waitFor(() => reachable(this.url(), 500), 30_000, `private Postgres :${this.port}`);
  }

  /** Kills the server as a crash would (no checkpoint, recovery from WAL on start), then starts it again. */
  async restart(downMs = 2_000): Promise<void> {
    this.pgCtl(['-m', 'immediate', '-w', 'stop']);
    await sleep(downMs);
    await this.start();
  }

  stop(): void {
    this.pgCtl(['-m', 'fast', '-w', 'stop'], { allowFailure: true });
  }

  killSync(): void {
    if (!existsSync(path.join(this.data, 'postmaster.pid'))) return;
    const [file, argv] = isRoot()
      ? ['runuser', ['-u', 'postgres', '--', path.join(this.bin, 'pg_ctl'), '-D', this.data, '-m', 'immediate', 'stop']]
      : [path.join(this.bin, 'pg_ctl'), ['-D', this.data, '-m', 'immediate', 'stop']];
    spawnSync(file, argv, { stdio: 'ignore' });
  }

  private get data(): string {
    return path.join(this.dir, 'data');
  }

  private pgCtl(args: string[], options: { allowFailure?: boolean } = {}): void {
    try {
      this.asPostgres(path.join(this.bin, 'pg_ctl'), ['-D', this.data, ...args]);
    } catch (err) {
      if (!options.allowFailure) throw err;
    }
  }

  private asPostgres(command: string, args: string[]): void {
    const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: 'pipe', cwd: this.dir });
  }
}

/** One nats-server of a JetStream cluster: client, route and monitoring ports, its own store. */
export class NatsNode {
  child?: ChildProcess;
  constructor(
    readonly name: string,
    readonly port: number,
    readonly routePort: number,
    readonly monitorPort: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(routes: string[], cluster: string): Promise<void> {
    const log = openSync(path.join(this.dir, `${this.name}.log`), 'a');
    const args = ['-js', '-a', '127.0.0.1', '-p', String(this.port), '-m', String(this.monitorPort), '-sd', path.join(this.dir, this.name)];
    if (routes.length > 1) {
      args.push(
        '-n',
        this.name,
        '--cluster_name',
        cluster,
        '--cluster',
        `nats://127.0.0.1:${this.routePort}`,
        '--routes',
        routes.join(','),
      );
    }
    this.child = spawn('nats-server', args, { stdio: ['ignore', log, log] });
    await waitFor(() => reachable(this.url, 500), 30_000, `private NATS ${this.name}`);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    return killAndWait(this.child, signal);
  }

  /** SIGSTOP: the node stops answering, as a node cut off by a network partition. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** What the node's monitoring endpoint says of JetStream (`/jsz`), with the streams' details. */
  async jsz(): Promise<{
    meta_cluster?: { leader?: string; replicas?: Array<{ current?: boolean }> };
    account_details?: Array<{ stream_detail?: Array<{ name: string; cluster?: { leader?: string } }> }>;
  }> {
    const res = await fetch(`http://127.0.0.1:${this.monitorPort}/jsz?accounts=true&streams=true`);
    return (await res.json()) as never;
  }
}

/**
 * Postgres, NATS (JetStream) and Redis of our own, on free loopback ports in a temp directory,
 * for the chaos run: restarting them must never touch the shared servers on the default ports
 * that every other test run on the machine (and CI) uses. Postgres is two servers (the sales
 * schema on the second, as a deployment that split it off), NATS a cluster of `natsNodes` servers
 * joined by routes (JetStream replicates its streams over them).
 */
export class PrivateInfra {
  private redis?: ChildProcess;
  private stopped = false;
  readonly killOnExit = () => this.killAllSync();

  private constructor(
    readonly dir: string,
    readonly postgres: PrivatePostgres,
    readonly salesPostgres: PrivatePostgres,
    readonly nats: NatsNode[],
    readonly redisPort: number,
  ) {}

  get natsUrl(): string {
    return this.nats.map((n) => n.url).join(',');
  }
  get redisUrl(): string {
    return `redis://127.0.0.1:${this.redisPort}`;
  }

  /**
   * `postgresSettings` (`name=value`) go to both Postgres servers, over the defaults of
   * PrivatePostgres; `salesServer: false` leaves the second one unstarted (a run that keeps every
   * schema on the first).
   */
  static async start(
    options: { natsNodes?: number; postgresSettings?: readonly string[]; salesServer?: boolean } = {},
  ): Promise<PrivateInfra> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'erp-chaos-'));
    const bin = postgresBinDir();
    const nodes: NatsNode[] = [];
    for (let i = 1; i <= (options.natsNodes ?? 3); i++) {
      nodes.push(new NatsNode(`n${i}`, await freePort(), await freePort(), await freePort(), dir));
    }
    const infra = new PrivateInfra(
      dir,
      new PrivatePostgres(path.join(dir, 'pg'), await freePort(), bin, options.postgresSettings),
      new PrivatePostgres(path.join(dir, 'pg-sales'), await freePort(), bin, options.postgresSettings),
      nodes,
      await freePort(),
    );
    // Whatever happens to the run, these servers die with it (until `stop`).
    process.once('exit', infra.killOnExit);
    for (const pg of options.salesServer === false ? [infra.postgres] : [infra.postgres, infra.salesPostgres]) {
      pg.init();
      await pg.start();
    }
    await Promise.all(nodes.map((_, i) => infra.startNats(i)));
    await infra.waitNatsCurrent(60_000);
    await infra.startRedis();
    return infra;
  }

  async startNats(i: number): Promise<void> {
    await this.nats[i]!.start(
      this.nats.map((n) => `nats://127.0.0.1:${n.routePort}`),
      CHAOS_PREFIX,
    );
  }

  /** SIGKILL to one nats-server, then a new one on the same ports and JetStream store. */
  async restartNats(i: number, downMs = 2_000): Promise<void> {
    await this.nats[i]!.kill();
    await sleep(downMs);
    await this.startNats(i);
  }

  /**
   * Waits until every node answers its health check: up, and its JetStream current with the
   * cluster (the meta group and every stream replica caught up).
   */
  async waitNatsCurrent(timeoutMs: number): Promise<void> {
    await waitFor(
      async () => {
        const healthy = await Promise.all(
          this.nats.map((n) =>
            fetch(`http://127.0.0.1:${n.monitorPort}/healthz`).then(
              (res) => res.ok,
              () => false,
            ),
          ),
        );
        if (!healthy.every(Boolean)) return false;
        if (this.nats.length === 1) return true;
        // And a meta leader that sees every other node current (it lists them): only then can it place three copies.
        const metas = await Promise.all(
          this.nats.map((n) =>
            n.jsz().then(
              (j) => j.meta_cluster,
              () => undefined,
            ),
          ),
        );
        return metas.some((m) => (m?.replicas ?? []).length === this.nats.length - 1 && m!.replicas!.every((p) => p.current));
      },
      timeoutMs,
      'every NATS node current',
    );
  }

  /** The index of the node that leads the named stream, and of the JetStream meta leader, as the cluster reports them. */
  async leaders(stream: string): Promise<{ stream: number; meta: number }> {
    for (const node of this.nats) {
      try {
        const jsz = await node.jsz();
        const details = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
        const streamLeader = details.find((d) => d.name === stream)?.cluster?.leader;
        const meta = jsz.meta_cluster?.leader;
        if (streamLeader && meta) return { stream: this.indexOf(streamLeader), meta: this.indexOf(meta) };
      } catch {
        // that node is down: ask another
      }
    }
    throw new Error(`no node names the leaders of ${stream}`);
  }

  /** SIGKILL to redis-server, then a new empty one on the same port (counters are lost, as in a real crash without persistence). */
  async restartRedis(downMs = 2_000): Promise<void> {
    await killAndWait(this.redis, 'SIGKILL');
    await sleep(downMs);
    await this.startRedis();
  }

  /** Stops every server; with `keep`, their data stays in `dir` to be looked at (start Postgres again with pg_ctl). */
  async stop(options: { keep?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    process.removeListener('exit', this.killOnExit);
    for (const node of this.nats) node.resume();
    await Promise.all([...this.nats.map((n) => n.kill('SIGTERM')), killAndWait(this.redis, 'SIGTERM')]);
    this.postgres.stop();
    this.salesPostgres.stop();
    if (!options.keep) rmSync(this.dir, { recursive: true, force: true });
  }

  private indexOf(name: string): number {
    const i = this.nats.findIndex((n) => n.name === name);
    if (i < 0) throw new Error(`unknown NATS node ${name}`);
    return i;
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
    for (const child of [...this.nats.map((n) => n.child), this.redis]) {
      if (child && child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
    }
    this.postgres.killSync();
    this.salesPostgres.killSync();
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

/** The folder of the Postgres server binaries (initdb, pg_ctl): PG_BIN_DIR, else the newest installed. */
export function postgresBinDir(): string {
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

async function killAndWait(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}
