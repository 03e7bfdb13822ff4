import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { reachable } from '@erp/runtime';
import { freePort } from '@erp/testing';
import { postgresBinDir } from './private-infra';
import { sleep, waitFor } from './wait';

/** The Debian packages the HA cluster is made of; `ensureHaTools` installs the missing ones. */
const HA_PACKAGES = { patroni: 'patroni', etcd: 'etcd-server', haproxy: 'haproxy' } as const;

/**
 * Timings of the cluster's leader election (Patroni's dynamic configuration): the primary renews
 * its leader key every `loop_wait`; a key not renewed for `ttl` seconds expires and the
 * synchronous standby takes it and is promoted. Patroni needs loop_wait + 2 × retry_timeout <= ttl.
 */
export const HA_TIMINGS = { ttl: 8, loopWait: 1, retryTimeout: 3 } as const;

/**
 * What the read-write endpoint's health check is: HAProxy asks every node's Patroni REST API
 * `GET /primary` twice a second; one failure takes a node out, one success puts it in, and the
 * sessions of a node taken out are shut, so no client keeps talking to a demoted primary.
 */
export const HA_CHECK = { interMs: 500, fall: 1, rise: 1 } as const;

/** Installs Patroni, etcd and HAProxy from Debian when one is missing (the machine runs as root, as CI does). */
export function ensureHaTools(): void {
  const missing = Object.entries(HA_PACKAGES)
    .filter(([tool]) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).error || spawnSync('which', [tool]).status !== 0)
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(`the HA Postgres cluster needs ${missing.join(', ')}: apt-get install -y ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'ignore', env });
}

/** One Patroni node: its Postgres (data directory, port) and its REST API. */
export class PatroniNode {
  child?: ChildProcess;
  constructor(
    readonly name: string,
    readonly dir: string,
    readonly pgPort: number,
    readonly restPort: number,
  ) {}

  get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  /** This node's Postgres directly, not through the endpoints (`postgres` database unless told). */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.pgPort}/${database}`;
  }

  /** What Patroni says of the node: `role` (primary, replica) and `state` (running, starting, …). */
  async status(): Promise<{ role?: string; state?: string; timeline?: number } | undefined> {
    try {
      const res = await fetch(`http://127.0.0.1:${this.restPort}/patroni`, { signal: AbortSignal.timeout(1_000) });
      return (await res.json()) as { role?: string; state?: string; timeline?: number };
    } catch {
      return undefined;
    }
  }

  /** The postmaster's pid, from its pid file, when it runs. */
  postmasterPid(): number | undefined {
    const file = path.join(this.dataDir, 'postmaster.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }
}

/**
 * A Postgres cluster without a single point of failure, as a deployment runs it (CloudNativePG
 * does the same inside Kubernetes): two Postgres servers managed by Patroni, one primary and one
 * synchronous standby (a commit returns once the standby has it, so an acknowledged write
 * survives the primary's loss), their leader elected in etcd, and HAProxy in front as the stable
 * endpoints: read-write (`rwUrl`, CloudNativePG's `-rw` Service) follows the primary, read-only
 * (`roUrl`, `-ro`) goes to the standby. Everything on free loopback ports in a temp directory.
 *
 * Only the Postgres servers are made highly available here; etcd and HAProxy are one process each
 * (in production they are three etcd members and a proxy per client node, or Kubernetes itself).
 */
export class HaPostgres {
  private etcd?: ChildProcess;
  private haproxy?: ChildProcess;
  private stopped = false;

  private constructor(
    readonly dir: string,
    readonly nodes: [PatroniNode, PatroniNode],
    readonly etcdPort: number,
    private readonly etcdPeerPort: number,
    readonly rwPort: number,
    readonly roPort: number,
  ) {}

  /** The read-write endpoint (`erp` database unless told): always the primary. */
  rwUrl(database = 'erp'): string {
    return `postgres://postgres@127.0.0.1:${this.rwPort}/${database}`;
  }

  /** The read-only endpoint: the standby. */
  roUrl(database = 'erp'): string {
    return `postgres://postgres@127.0.0.1:${this.roPort}/${database}`;
  }

  static async start(options: { dir?: string } = {}): Promise<HaPostgres> {
    ensureHaTools();
    const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'erp-ha-'));
    mkdirSync(dir, { recursive: true });
    const nodes: [PatroniNode, PatroniNode] = [
      new PatroniNode('pg1', path.join(dir, 'pg1'), await freePort(), await freePort()),
      new PatroniNode('pg2', path.join(dir, 'pg2'), await freePort(), await freePort()),
    ];
    const ha = new HaPostgres(dir, nodes, await freePort(), await freePort(), await freePort(), await freePort());
    process.once('exit', () => ha.killAllSync());
    ha.startEtcd();
    await waitFor(() => reachable(`http://127.0.0.1:${ha.etcdPort}/health`, 500), 30_000, 'etcd');
    ha.startHaproxy();
    // The first node bootstraps the cluster (initdb); the second clones it (pg_basebackup) and follows.
    await ha.startNode(0);
    await waitFor(async () => (await ha.primary()) === 0, 60_000, 'pg1 primary');
    await ha.startNode(1);
    await ha.waitHealthy(120_000);
    const admin = new pg.Client({ connectionString: ha.rwUrl('postgres') });
    await admin.connect();
    await admin.query('create database erp');
    await admin.end();
    return ha;
  }

  /** Starts (again) node `i`'s Patroni, which starts its Postgres: a node that was primary rejoins as a standby (pg_rewind). */
  async startNode(i: number): Promise<void> {
    const node = this.nodes[i]!;
    mkdirSync(node.dir, { recursive: true });
    chownSync(this.dir, uid('postgres'), gid('postgres'));
    chownSync(node.dir, uid('postgres'), gid('postgres'));
    const config = path.join(node.dir, 'patroni.yml');
    writeFileSync(config, this.patroniConfig(node));
    chownSync(config, uid('postgres'), gid('postgres'));
    const log = openSync(path.join(node.dir, 'patroni.log'), 'a');
    const asPostgres = process.getuid?.() === 0 ? { uid: uid('postgres'), gid: gid('postgres') } : {};
    node.child = spawn('patroni', [config], {
      stdio: ['ignore', log, log],
      cwd: node.dir,
      env: { ...process.env, HOME: node.dir, PGPASSFILE: path.join(node.dir, 'pgpass') },
      ...asPostgres,
    });
    await waitFor(async () => (await node.status()) !== undefined, 30_000, `${node.name} REST API`);
  }

  /**
   * The node's loss, as a host's: SIGKILL to its Patroni and to every process of its Postgres at
   * once (the postmaster leads their process group). Nothing is shut down cleanly, no reset of
   * the clients' connections comes from a Postgres that stopped on purpose.
   */
  async killNode(i: number): Promise<void> {
    const node = this.nodes[i]!;
    const postmaster = node.postmasterPid();
    const exited = node.child && node.child.exitCode === null ? new Promise((r) => node.child!.once('exit', r)) : undefined;
    node.child?.kill('SIGKILL');
    if (postmaster) killTree(postmaster);
    await exited;
    await waitFor(async () => node.postmasterPid() === undefined, 10_000, `${node.name}'s Postgres gone`);
  }

  /** The index of the node Patroni reports as primary, if any. */
  async primary(): Promise<number | undefined> {
    const states = await Promise.all(this.nodes.map((n) => n.status()));
    // Patroni 3.0 still calls the primary `master`; later releases `primary`.
    const i = states.findIndex((s) => (s?.role === 'primary' || s?.role === 'master') && s.state === 'running');
    return i < 0 ? undefined : i;
  }

  /**
   * Waits for a primary and a streaming synchronous standby: Patroni's `/sync` key names the
   * standby, and the primary's `pg_stat_replication` shows it `sync` and caught up.
   */
  async waitHealthy(timeoutMs: number): Promise<{ primary: number; standby: number }> {
    let found: { primary: number; standby: number } | undefined;
    await waitFor(
      async () => {
        const p = await this.primary();
        if (p === undefined) return false;
        const standby = 1 - p;
        const s = await this.nodes[standby]!.status();
        if (s?.role !== 'replica' || s.state !== 'running') return false;
        const client = new pg.Client({ connectionString: this.nodes[p]!.url(), connectionTimeoutMillis: 1_000 });
        try {
          await client.connect();
          const { rows } = await client.query<{ sync_state: string }>(
            `select sync_state from pg_stat_replication where state = 'streaming' and sync_state = 'sync'`,
          );
          if (rows.length !== 1) return false;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => undefined);
        }
        // And Patroni has it as the synchronous standby in etcd (its /sync key): only that node may be promoted.
        try {
          const res = await fetch(`http://127.0.0.1:${this.nodes[p]!.restPort}/cluster`, { signal: AbortSignal.timeout(1_000) });
          const { members } = (await res.json()) as { members: Array<{ name: string; role: string; state: string }> };
          const member = members.find((m) => m.name === this.nodes[standby]!.name);
          if (member?.role !== 'sync_standby') return false;
        } catch {
          return false;
        }
        // And each endpoint reaches the node it should.
        const via = async (url: string) => {
          const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
          try {
            await c.connect();
            const { rows } = await c.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
            return rows[0]!.standby;
          } catch {
            return undefined;
          } finally {
            await c.end().catch(() => undefined);
          }
        };
        if ((await via(this.rwUrl('postgres'))) !== false || (await via(this.roUrl('postgres'))) !== true) return false;
        found = { primary: p, standby };
        return true;
      },
      timeoutMs,
      'a primary and a synchronous standby',
    );
    return found!;
  }

  async stop(options: { keep?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const node of this.nodes) await stopChild(node.child, 'SIGTERM', 30_000);
    // A Postgres whose Patroni was killed outlives it: stop it too.
    for (const node of this.nodes) {
      const pid = node.postmasterPid();
      if (pid) process.kill(pid, 'SIGQUIT');
    }
    await stopChild(this.haproxy, 'SIGTERM', 5_000);
    await stopChild(this.etcd, 'SIGTERM', 5_000);
    if (!options.keep) rmSync(this.dir, { recursive: true, force: true });
  }

  private startEtcd(): void {
    const log = openSync(path.join(this.dir, 'etcd.log'), 'a');
    const client = `http://127.0.0.1:${this.etcdPort}`;
    const peer = `http://127.0.0.1:${this.etcdPeerPort}`;
    this.etcd = spawn(
      'etcd',
      [
        '--name=etcd1',
        `--data-dir=${path.join(this.dir, 'etcd')}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=etcd1=${peer}`,
        '--initial-cluster-state=new',
        '--logger=zap',
        '--log-outputs=stderr',
      ],
      { stdio: ['ignore', log, log] },
    );
  }

  private startHaproxy(): void {
    const cfg = path.join(this.dir, 'haproxy.cfg');
    const servers = (check: string) =>
      [
        `  option httpchk GET ${check}`,
        '  http-check expect status 200',
        `  default-server inter ${HA_CHECK.interMs} fastinter ${HA_CHECK.interMs} downinter ${HA_CHECK.interMs} fall ${HA_CHECK.fall} rise ${HA_CHECK.rise} on-marked-down shutdown-sessions`,
        ...this.nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`),
      ].join('\n');
    writeFileSync(
      cfg,
      [
        'global',
        '  maxconn 2000',
        'defaults',
        '  mode tcp',
        '  timeout connect 2s',
        // Idle pool connections stay open: the clients' keepalive and the pool's idle timeout close them.
        '  timeout client 30m',
        '  timeout server 30m',
        '  timeout check 1s',
        'listen rw',
        `  bind 127.0.0.1:${this.rwPort}`,
        servers('/primary'),
        'listen ro',
        `  bind 127.0.0.1:${this.roPort}`,
        '  balance roundrobin',
        servers('/replica'),
        '',
      ].join('\n'),
    );
    const log = openSync(path.join(this.dir, 'haproxy.log'), 'a');
    this.haproxy = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', log, log] });
  }

  private patroniConfig(node: PatroniNode): string {
    const bin = postgresBinDir();
    return `scope: erp-ha
name: ${node.name}
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${node.restPort}
  connect_address: 127.0.0.1:${node.restPort}
etcd3:
  hosts: 127.0.0.1:${this.etcdPort}
bootstrap:
  dcs:
    ttl: ${HA_TIMINGS.ttl}
    loop_wait: ${HA_TIMINGS.loopWait}
    retry_timeout: ${HA_TIMINGS.retryTimeout}
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        max_connections: 400
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        # The crash is the process's, not the machine's: the OS keeps what was written.
        # (full_page_writes stays on: pg_rewind, which makes a killed primary a standby again, needs it.)
        fsync: 'off'
        # Queries on the standby (exports) hold back the primary's vacuum instead of being cancelled by replay.
        hot_standby_feedback: 'on'
  initdb:
    - encoding: UTF8
    - auth: trust
postgresql:
  listen: 127.0.0.1:${node.pgPort}
  connect_address: 127.0.0.1:${node.pgPort}
  data_dir: ${node.dataDir}
  bin_dir: ${bin}
  pgpass: ${path.join(node.dir, 'pgpass')}
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
  parameters:
    unix_socket_directories: '${node.dir}'
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
`;
  }

  private killAllSync(): void {
    if (this.stopped) return;
    for (const node of this.nodes) {
      node.child?.kill('SIGKILL');
      const pid = node.postmasterPid();
      if (pid) killTree(pid);
    }
    this.haproxy?.kill('SIGKILL');
    this.etcd?.kill('SIGKILL');
  }
}

/** SIGKILL to a postmaster and its children (its backends, walsender, checkpointer…) at once. */
function killTree(pid: number): void {
  const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((line) => Number(line.trim()))
    .filter((child) => child > 0);
  for (const target of [pid, ...children]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  if (await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)])) return;
  child.kill('SIGKILL');
  await exited;
}

const uid = (user: string) =>
  process.getuid?.() === 0 ? Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim()) : process.getuid!();
const gid = (user: string) =>
  process.getuid?.() === 0 ? Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim()) : process.getgid!();
