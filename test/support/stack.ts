import { Objm } from '@nats-io/obj';
import pg from 'pg';
import { Bus, EXPORT_WRITERS, exportStoreName } from '@erp/bus';
import { schemaOf, type ServiceName } from '@erp/contracts';
import { BaseConfig, createLogger, loadConfig, startService, type RunningService, type ServiceSpec } from '@erp/runtime';
import { consumerBacklogs, deleteStreamsOf, eventually, isolate, serviceEnv, type Isolation } from '@erp/testing';
import { seedFixture, type SeedOutput } from '@erp/back-office';
import { GatewayConfig, gatewayService, type GatewayOptions } from '@erp/gateway';
import { inventoryService } from '@erp/inventory';
import { SalesConfig, salesService } from '@erp/sales';
import { returnsService } from '@erp/returns';
import { packagesService } from '@erp/packages';
import { webhookIngestService, type WebhookIngestConfig } from '@erp/webhook-ingest';
import { SubscriptionsConfig, subscriptionsService } from '@erp/subscriptions';
import { exportsService, type ExportsConfig } from '@erp/exports';
import { ContractRecorder } from './contract';
import { addResponseSink, recordResponse } from './recording';

export interface StackOptions {
  services?: readonly ServiceName[];
  gateway?: Partial<Record<keyof GatewayConfig, string>>;
  gatewayOptions?: GatewayOptions;
  /** The database of each service whose schema lives apart from the isolation's (a deployment that split it off). */
  databases?: Partial<Record<ServiceName, string>>;
  /** Environment of the subscriptions service beyond the stack's (it may always call loopback receivers over http). */
  subscriptions?: Record<string, string>;
  /**
   * Settings of webhook-ingest beyond the stack's (the shops' credential keys, the reconciliation's
   * pace), read when it starts: after the gateway, so they may name its URL. `openTienda` replaces the shops' clients.
   */
  webhookIngest?: (stack: Stack) => Partial<Omit<WebhookIngestConfig, keyof BaseConfig>>;
  /** Settings of the exports service beyond the stack's (a short file lifetime, lease). */
  exports?: Partial<Omit<ExportsConfig, keyof BaseConfig> & Pick<BaseConfig, 'EXPORT_TTL_MS'>>;
  /**
   * Check every response `api()` receives against the OpenAPI document when the stack stops
   * (default true): a response whose status, headers or body the document does not declare fails
   * the test file.
   */
  contract?: boolean;
}

/** Environment every in-process service of a stack shares: the isolation's (`serviceEnv`), the gateway on a free port. */
export function stackEnv(iso: Isolation, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return serviceEnv(iso, {
    PORT: '0',
    DB_POOL_MAX: '5',
    REQUEST_TIMEOUT_MS: '15000', // generous: test files run in parallel on two cores
    // Replies Postgres serialised are held to their contract in every test, whatever NODE_ENV says.
    VALIDATE_REPLIES: 'true',
    // Return registrations left pending by a failure are squared within seconds, not a minute.
    REGISTRATION_SWEEP_INTERVAL_MS: '500',
    REGISTRATION_SQUARE_AFTER_MS: '2000',
    ...extra,
  });
}

/**
 * The whole system in this process, isolated: every service started for real against Postgres,
 * NATS and Redis, the gateway on a free port. Services can be stopped and started again.
 */
export class Stack {
  readonly running = new Map<ServiceName, RunningService<BaseConfig>>();
  /** What `api()` received, for the contract check; undefined when the stack was started without it. */
  readonly recorder: ContractRecorder | undefined;
  private readonly removeSink: (() => void) | undefined;
  /** The database of each service whose schema lives apart from the isolation's. */
  private readonly databases: Partial<Record<ServiceName, string>>;
  baseUrl = '';
  private constructor(
    readonly iso: Isolation,
    readonly admin: Bus,
    private readonly options: StackOptions,
  ) {
    this.databases = { ...options.databases };
    const recorder = options.contract === false ? undefined : new ContractRecorder();
    this.recorder = recorder;
    this.removeSink =
      recorder &&
      addResponseSink({ baseUrl: () => this.baseUrl, record: (method, path, res, body) => recorder.record(method, path, res, body) });
  }

  static async start(options: StackOptions = {}): Promise<Stack> {
    const iso = await isolate('stack');
    const admin = await Bus.connect({
      servers: iso.natsUrl,
      prefix: iso.subjectPrefix,
      name: 'test-admin',
      logger: createLogger('test-admin', 'silent'),
      requestTimeoutMs: 5_000,
    });
    const stack = new Stack(iso, admin, options);
    // Schemas migrate one after another; then the services start together.
    for (const name of options.services ?? ALL) await stack.startService(name);
    return stack;
  }

  spec(name: ServiceName): ServiceSpec<BaseConfig> {
    const database = this.databases[name];
    const env = stackEnv(this.iso, {
      ...(name === 'gateway' ? this.options.gateway : {}),
      ...(database !== undefined ? { DATABASE_URL: database } : {}),
    });
    switch (name) {
      case 'gateway':
        return gatewayService(loadConfig(GatewayConfig, env), {
          ...this.options.gatewayOptions,
          onListening: (port) => {
            this.baseUrl = `http://127.0.0.1:${port}`;
          },
        }) as unknown as ServiceSpec<BaseConfig>;
      case 'inventory':
        return inventoryService(loadConfig(BaseConfig, env));
      case 'sales':
        return salesService(loadConfig(SalesConfig, env));
      case 'returns':
        return returnsService(loadConfig(BaseConfig, env));
      case 'packages':
        return packagesService(loadConfig(BaseConfig, env));
      case 'webhook-ingest':
        return webhookIngestService({ ...loadConfig(BaseConfig, env), ...this.options.webhookIngest?.(this) });
      case 'subscriptions':
        return subscriptionsService(
          loadConfig(SubscriptionsConfig, {
            ...env,
            EVENTS_ALLOW_PRIVATE_URLS: 'true',
            EVENTS_ALLOW_HTTP: 'true',
            ...this.options.subscriptions,
          }),
        ) as unknown as ServiceSpec<BaseConfig>;
      case 'exports':
        return exportsService({ ...loadConfig(BaseConfig, env), ...this.options.exports }) as unknown as ServiceSpec<BaseConfig>;
    }
  }

  /** Gives a service another database from its next start on: its schema moved to another server. */
  moveDatabase(name: ServiceName, databaseUrl: string): void {
    this.databases[name] = databaseUrl;
  }

  async startService(name: ServiceName): Promise<RunningService<BaseConfig>> {
    const service = await startService(this.spec(name), { migrateOnStart: true });
    this.running.set(name, service);
    return service;
  }

  async stopService(name: ServiceName): Promise<void> {
    await this.running.get(name)?.stop();
    this.running.delete(name);
  }

  async seed(fixture: unknown): Promise<SeedOutput> {
    return seedFixture(this.admin, fixture);
  }

  /** Fetch against the gateway with an API key. */
  async api(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
    const { key, headers, ...rest } = init;
    const res = await fetch(`${this.baseUrl}${path}`, {
      ...rest,
      headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string> | undefined) },
    });
    this.recorder?.record(rest.method ?? 'GET', path, res, rest.body);
    return res;
  }

  /** `fetch` that feeds the contract check, for code given a base URL (the typed client). */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    recordResponse(url, init?.method ?? (input instanceof Request ? input.method : 'GET'), res, init?.body);
    return res;
  };

  /**
   * The names of the files in the export store, as the store itself lists them (with a consumer,
   * which only the tests' unrestricted connection may create): what the exports service's own
   * records could have missed.
   */
  async exportFiles(): Promise<string[]> {
    const names: string[] = [];
    for (const writer of EXPORT_WRITERS) {
      const store = await new Objm(this.admin.nc).open(exportStoreName(this.iso.subjectPrefix, writer));
      names.push(...(await store.list()).map((info) => info.name));
    }
    return names;
  }

  /**
   * Waits until the system is at rest: every running service's outbox on the stack's database
   * published, and every durable consumer of the streams has acknowledged all it was given. What
   * an event changes elsewhere (the event log, a sale's returned amount) is then in place.
   */
  async settled(timeoutMs = 20_000): Promise<void> {
    const schemas = [...this.running.keys()].filter((name) => this.databases[name] === undefined).map(schemaOf);
    await eventually(async () => {
      for (const schema of schemas) {
        const [{ n }] = (await this.query<{ n: number }>(`select count(*)::int as n from ${schema}.outbox where published_at is null`)) as [
          { n: number },
        ];
        expect([`${schema}.outbox`, n]).toEqual([`${schema}.outbox`, 0]);
      }
      for (const c of await consumerBacklogs(this.admin.nc, this.iso.subjectPrefix))
        expect([c.name, c.pending, c.unacknowledged]).toEqual([c.name, 0, 0]);
    }, timeoutMs);
  }

  /** Runs SQL on the stack's database, for assertions on what the services stored. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async query<R extends Record<string, any> = Record<string, any>>(text: string, params: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.iso.databaseUrl });
    await client.connect();
    try {
      return (await client.query<R>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** Runs `statement` in a transaction left open until `release()`: a lock held while the system works. */
  async hold(statement: string): Promise<{ release(): Promise<void> }> {
    const client = new pg.Client({ connectionString: this.iso.databaseUrl });
    await client.connect();
    await client.query('begin');
    await client.query(statement);
    return {
      release: async () => {
        await client.query('rollback');
        await client.end();
      },
    };
  }

  async stop(): Promise<void> {
    this.removeSink?.();
    for (const name of [...this.running.keys()].reverse()) await this.stopService(name);
    await deleteStreamsOf(this.admin.nc, this.iso.subjectPrefix);
    await this.admin.drain();
    await this.iso.drop();
    // OPENAPI_EXAMPLES=path collects the document's examples from this run (see README, "First call").
    if (process.env.OPENAPI_EXAMPLES) await this.recorder?.saveExamples(process.env.OPENAPI_EXAMPLES);
    await this.recorder?.assertConform();
  }
}

/** The parsed JSON body of a response, untyped on purpose: tests assert its shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(res: Response): Promise<any> {
  return res.json();
}

const ALL: readonly ServiceName[] = ['gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook-ingest', 'subscriptions', 'exports'];

/** A compact two-company fixture: overlapping names and codes, so isolation is visible. */
export function twoCompanies(): unknown {
  const empresa = (ref: string, nombre: string, key: string, stock: number) => ({
    ref,
    nombre,
    activo: true,
    usuarios: [{ ref: 'admin', nombre: `Admin ${ref}`, rol: 'Administrador', activo: true }],
    api_keys: [{ ref: 'main', usuario: 'admin', key }],
    sucursales: [
      {
        ref: 'centro',
        nombre: 'Sucursal Centro',
        activo: true,
        bodegas: [
          { ref: 'principal', nombre: 'Bodega Principal', activo: true },
          { ref: 'reserva', nombre: 'Bodega Reserva', activo: true },
        ],
      },
    ],
    productos: [
      {
        ref: 'laptop',
        nombre: 'Laptop 14',
        codigo: 'LAP-14',
        categoria: 'Electrónicos',
        marca: 'Acer',
        tipo: 'Producto',
        precio: 649.99,
        costo: 480,
        costo_anterior: 470,
        costo_promedio: 475.25,
        enable: 1,
        inventarios: [
          { bodega: 'principal', stock, stock_minimo: 3, stock_maximo: 40 },
          { bodega: 'reserva', stock: 2.5, stock_minimo: 0, stock_maximo: 10 },
        ],
      },
    ],
  });
  return {
    empresas: [
      empresa('a', 'Empresa A', 'test_key_company_a_0123456789abcdef', 12),
      empresa('b', 'Empresa B', 'test_key_company_b_0123456789abcdef', 7),
    ],
  };
}

export const KEY_A = 'test_key_company_a_0123456789abcdef';
export const KEY_B = 'test_key_company_b_0123456789abcdef';

/** Polls a request until it answers `status`; the milliseconds that took (throws past `timeoutMs`). */
export async function msUntilStatus(request: () => Promise<Response>, status: number, timeoutMs = 8_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await request();
    if (res.status === status) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`still ${res.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
