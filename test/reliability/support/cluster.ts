import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Bus, provisionJetStream } from '@erp/bus';
import type { ServiceName } from '@erp/contracts';
import { createDb, migrateSchema, type Migrations } from '@erp/db';
import { gatewayMigrations, GATEWAY_SCHEMA } from '@erp/gateway';
import { inventoryMigrations, INVENTORY_SCHEMA } from '@erp/inventory';
import { packagesMigrations, PACKAGES_SCHEMA } from '@erp/packages';
import { returnsMigrations, RETURNS_SCHEMA } from '@erp/returns';
import { salesMigrations, SALES_SCHEMA } from '@erp/sales';
import { webhookIngestMigrations, WEBHOOK_INGEST_SCHEMA } from '@erp/webhook-ingest';
import { BaseConfig, createLogger, loadConfig, natsConnection } from '@erp/runtime';
import { freePort } from '@erp/testing';
import { subscriptionsMigrations, SUBSCRIPTIONS_SCHEMA } from '@erp/subscriptions';
import { exportsMigrations, EXPORTS_SCHEMA } from '@erp/exports';
import { sleep } from './wait';

const ROOT = path.resolve(__dirname, '../../..');

const SCHEMAS: Record<ServiceName, { schema: string; migrations: Migrations }> = {
  gateway: { schema: GATEWAY_SCHEMA, migrations: gatewayMigrations },
  inventory: { schema: INVENTORY_SCHEMA, migrations: inventoryMigrations },
  sales: { schema: SALES_SCHEMA, migrations: salesMigrations },
  returns: { schema: RETURNS_SCHEMA, migrations: returnsMigrations },
  packages: { schema: PACKAGES_SCHEMA, migrations: packagesMigrations },
  'webhook-ingest': { schema: WEBHOOK_INGEST_SCHEMA, migrations: webhookIngestMigrations },
  subscriptions: { schema: SUBSCRIPTIONS_SCHEMA, migrations: subscriptionsMigrations },
  exports: { schema: EXPORTS_SCHEMA, migrations: exportsMigrations },
};

export const ALL_SERVICES: readonly ServiceName[] = [
  'gateway',
  'inventory',
  'sales',
  'returns',
  'packages',
  'webhook-ingest',
  'subscriptions',
  'exports',
];

/** One running replica of a service: its real entry point (`src/main.ts`) in its own process. */
export interface Replica {
  name: ServiceName;
  /** `sales#2`: the service and the how-many-th replica this cluster started of it. */
  label: string;
  child: ChildProcess;
  /** The gateway's HTTP base URL (undefined for the other services). */
  url?: string;
  opsUrl: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Set when this cluster signalled it: any other exit is a crash. */
  stopping?: boolean;
  /** The last lines it wrote, for the report when it dies by itself. */
  tail: string[];
}

/** A replica that exited without being told to. */
export interface Crash {
  label: string;
  name: ServiceName;
  /** The address it served, for the gateway's rotation. */
  url?: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The first line of its last error output. */
  reason: string;
}

/** The first error line of a replica's last output lines, else its last line. */
const errorLine = (tail: readonly string[]) =>
  tail.find((l) => /^\w*Error\b|^Error:|"level":(50|60|"error"|"fatal")/.test(l)) ?? tail.at(-1) ?? '';

/**
 * Services as production runs them, one process per replica, against one database, NATS prefix
 * and Redis: replicas can be added, killed with any signal, and replaced the way a rolling
 * update does it (the new one ready before the old one is told to stop).
 */
export class Cluster {
  readonly replicas = new Set<Replica>();
  /** Replicas that died by themselves and have not been replaced yet. */
  readonly crashes: Crash[] = [];
  private started = 0;
  private readonly counters = new Map<ServiceName, number>();

  constructor(
    /** Environment every replica gets: database, NATS, Redis, prefixes, timeouts. */
    private readonly env: Record<string, string>,
    /** Extra environment per service (e.g. fast reservation sweeps for inventory). */
    private readonly perService: Partial<Record<ServiceName, Record<string, string>>> = {},
    /** Where each replica's output goes (one file per replica); discarded when undefined. */
    private readonly logDir?: string,
  ) {
    process.once('exit', this.killOnExit);
  }

  /** Whatever happens to the run, its replicas die with it (until `stop`: a run of several repeats adds one per repeat). */
  private readonly killOnExit = () => {
    for (const r of this.replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  };

  /** Migrates every service's schema and sets up JetStream, as the chart's hook Jobs do before the services start. */
  async migrate(): Promise<void> {
    for (const name of ALL_SERVICES) {
      const url = this.perService[name]?.DATABASE_URL ?? this.env.DATABASE_URL!;
      const db = createDb<unknown>({ connectionString: url, max: 1, applicationName: 'reliability-migrate' });
      try {
        await migrateSchema(db, SCHEMAS[name].schema, SCHEMAS[name].migrations);
      } finally {
        await db.destroy();
      }
    }
    // As the migration Job does: the stream and the export store with the configured copies and limits.
    const bus = await Bus.connect({
      ...natsConnection(loadConfig(BaseConfig, this.env)),
      prefix: this.env.SUBJECT_PREFIX!,
      name: 'reliability-migrate',
      logger: createLogger('reliability-migrate', 'warn'),
    });
    try {
      await provisionJetStream(bus, ALL_SERVICES);
    } finally {
      await bus.drain();
    }
  }

  /**
   * Adds to the environment of a service's replicas started from now on (the running ones keep
   * theirs: replace them to apply it), as a changed Deployment does for its next pods.
   */
  configure(name: ServiceName, env: Record<string, string>): void {
    this.perService[name] = { ...this.perService[name], ...env };
  }

  /** Starts one more replica and resolves once its /readyz answers 200. */
  async start(name: ServiceName, extra: Record<string, string> = {}): Promise<Replica> {
    const opsPort = await freePort();
    const port = name === 'gateway' ? await freePort() : undefined;
    const n = (this.counters.get(name) ?? 0) + 1;
    this.counters.set(name, n);
    const label = `${name}#${n}`;
    const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', `services/${name}/src/main.ts`], {
      cwd: ROOT,
      env: {
        ...process.env,
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'warn',
        ...this.env,
        ...this.perService[name],
        ...extra,
        OPS_PORT: String(opsPort),
        ...(port !== undefined ? { PORT: String(port) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const log = this.logDir ? createWriteStream(path.join(this.logDir, `${label.replace('#', '-')}.log`)) : undefined;
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        log?.write(chunk);
        tail.push(...chunk.toString().split('\n').filter(Boolean));
        if (tail.length > 40) tail.splice(0, tail.length - 40);
      });
    }
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const replica: Replica = {
      name,
      label,
      child,
      opsUrl: `http://127.0.0.1:${opsPort}`,
      exit,
      tail,
      ...(port !== undefined ? { url: `http://127.0.0.1:${port}` } : {}),
    };
    this.replicas.add(replica);
    void exit.then(({ code, signal }) => {
      this.replicas.delete(replica);
      log?.end();
      if (!replica.stopping) {
        this.crashes.push({
          label,
          name,
          ...(replica.url ? { url: replica.url } : {}),
          code,
          signal,
          reason: errorLine(tail).slice(0, 300),
        });
      }
    });
    this.started++;
    await this.waitReady(replica);
    return replica;
  }

  /**
   * Starts a replica as Kubernetes keeps a pod's place filled: one that exits while starting (a
   * service gives up when a dependency does not answer in time, e.g. JetStream electing a leader)
   * is started again after a pause, up to `attempts` times. A failed start is not a death while
   * running: it is taken out of `crashes` and told to `onFailedStart` with its first error line.
   */
  async startRetrying(
    name: ServiceName,
    options: { attempts?: number; pauseMs?: number; onFailedStart?: (label: string, reason: string) => void } = {},
  ): Promise<Replica> {
    const attempts = options.attempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.start(name);
      } catch (err) {
        const label = /^(\S+) exited while starting/.exec((err as Error).message)?.[1];
        if (!label || attempt >= attempts) throw err;
        // Its exit is recorded right after the exit event that made start give up.
        await sleep(50);
        const i = this.crashes.findIndex((c) => c.label === label);
        const [crash] = i >= 0 ? this.crashes.splice(i, 1) : [];
        options.onFailedStart?.(label, crash?.reason ?? '');
        await sleep(options.pauseMs ?? 2_000);
      }
    }
  }

  /** Resolves once the replica's /readyz answers 200 (its Postgres, NATS and, for the gateway, Redis checks pass). */
  async waitReady(replica: Replica, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (replica.child.exitCode !== null || replica.child.signalCode !== null)
        throw new Error(`${replica.label} exited while starting: ${errorLine(replica.tail).slice(0, 300)}`);
      try {
        const res = await fetch(`${replica.opsUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${replica.label} not ready after ${timeoutMs} ms`);
      await sleep(200);
    }
  }

  /** Waits until every running replica is ready again (after a dependency came back). */
  async waitAllReady(timeoutMs = 90_000): Promise<void> {
    await Promise.all([...this.replicas].map((r) => this.waitReady(r, timeoutMs)));
  }

  /** Sends a signal and waits for the process to exit. */
  async signal(replica: Replica, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    replica.stopping = true;
    if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill(signal);
    return replica.exit;
  }

  /**
   * A rolling update's step for one replica: start its successor, wait until it is ready, then
   * SIGTERM the old one and wait for it to drain and exit. `beforeStop` runs between the two
   * (the gateway's client takes the old address out of rotation there, as a Service's endpoints do).
   */
  async replace(
    old: Replica,
    beforeStop?: (successor: Replica) => void | Promise<void>,
  ): Promise<{ successor: Replica; exit: { code: number | null; signal: NodeJS.Signals | null } }> {
    const successor = await this.start(old.name);
    await beforeStop?.(successor);
    const exit = await this.signal(old, 'SIGTERM');
    return { successor, exit };
  }

  of(name: ServiceName): Replica[] {
    return [...this.replicas].filter((r) => r.name === name);
  }

  get startedCount(): number {
    return this.started;
  }

  /** SIGTERM to every replica, gateways first, then waits for all of them. */
  async stop(): Promise<void> {
    const gateways = this.of('gateway');
    await Promise.all(gateways.map((r) => this.signal(r, 'SIGTERM')));
    await Promise.all([...this.replicas].map((r) => this.signal(r, 'SIGTERM')));
    process.removeListener('exit', this.killOnExit);
  }
}
