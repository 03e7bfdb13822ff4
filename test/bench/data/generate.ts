import pg from 'pg';
import { createDb, migrateSchema, type Migrations } from '@erp/db';
import { Random } from '@erp/testing';
import { gatewayMigrations } from '@erp/gateway';
import { inventoryMigrations } from '@erp/inventory';
import { packagesMigrations } from '@erp/packages';
import { returnsMigrations } from '@erp/returns';
import { salesMigrations } from '@erp/sales';
import { webhookIngestMigrations } from '@erp/webhook-ingest';
import { quoteIdent } from './copy';
import type { LoadedCompany, Loader } from './context';
import { gatewayLoader } from './loaders/gateway.loader';
import { inventoryLoader } from './loaders/inventory.loader';
import { packagesLoader } from './loaders/packages.loader';
import { returnsLoader } from './loaders/returns.loader';
import { salesLoader } from './loaders/sales.loader';
import { webhookIngestLoader } from './loaders/webhook-ingest.loader';
import { companyPlans, type Scale } from './plan';
import type { Progress } from './progress';
import { todayUtc } from './time';

/** Every schema, migrated by its owner's migrations, in the order the services start. */
const SCHEMAS: ReadonlyArray<readonly [schema: string, migrations: Migrations]> = [
  ['gateway', gatewayMigrations],
  ['inventory', inventoryMigrations],
  ['packages', packagesMigrations],
  ['sales', salesMigrations],
  ['returns', returnsMigrations],
  ['webhook_ingest', webhookIngestMigrations],
];

/** One loader per schema, in dependency order: each reads the ids the earlier ones recorded. */
export const LOADERS: readonly Loader[] = [gatewayLoader, inventoryLoader, packagesLoader, salesLoader, returnsLoader, webhookIngestLoader];

export interface BenchDataOptions {
  /** The database of every schema not named in `databaseUrls`. */
  databaseUrl: string;
  /**
   * The database of each schema (by name: `sales`, `webhook_ingest`…) that lives apart, as
   * `DATABASE_URL_<SCHEMA>` places it for the services: each schema is migrated and loaded there,
   * and no statement names schemas of two databases.
   */
  databaseUrls?: Readonly<Partial<Record<string, string>>>;
  scale: Scale;
  seed: number;
  /** Drop and create the databases first (the CLI does; the test hands over empty isolated ones). */
  recreate: boolean;
  progress: Progress;
  /** Last day of the history (default: today, UTC). */
  today?: string;
}

export interface BenchDataResult {
  companies: Array<{ clave: string; nombre: string; empresaId: number; apiKey: string }>;
  counts: Record<string, number>;
  skipped: Array<{ schema: string; reason: string }>;
  seconds: number;
}

async function recreateDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!name.includes('bench')) throw new Error(`refusing to drop database ${name}: its name must contain "bench"`);
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${quoteIdent(name)} with (force)`);
    await admin.query(`create database ${quoteIdent(name)}`);
  } finally {
    await admin.end();
  }
}

/**
 * Builds the benchmark database (or databases, one per place a schema lives): migrates every
 * schema with its service's migrations, then loads a large company beside two smaller ones with
 * COPY, schema by schema, and analyzes what it loaded.
 */
export async function generateBenchData(options: BenchDataOptions): Promise<BenchDataResult> {
  const started = Date.now();
  const { progress } = options;
  const urlOf = (schema: string) => options.databaseUrls?.[schema] ?? options.databaseUrl;
  if (options.recreate) for (const url of new Set(SCHEMAS.map(([schema]) => urlOf(schema)))) await recreateDatabase(url);

  for (const [schema, migrations] of SCHEMAS) {
    const db = createDb<unknown>({ connectionString: urlOf(schema), max: 1, applicationName: 'bench-data' });
    try {
      await migrateSchema(db, schema, migrations);
    } finally {
      await db.destroy();
    }
  }

  const connect = async (url: string) => {
    const c = new pg.Client({ connectionString: url, application_name: 'bench-data' });
    await c.connect();
    // Bulk load: losing the tail of it in a crash only means running the generator again.
    await c.query(`set synchronous_commit = off`);
    await c.query(`set maintenance_work_mem = '512MB'`);
    return c;
  };
  // One connection per database, opened when a schema of it is first loaded.
  const clients = new Map<string, Promise<pg.Client>>();
  const clientOf = (schema: string): Promise<pg.Client> => {
    const url = urlOf(schema);
    let client = clients.get(url);
    if (!client) {
      client = connect(url);
      clients.set(url, client);
    }
    return client;
  };
  try {
    const companies: LoadedCompany[] = companyPlans(options.scale).map((plan) => ({
      plan,
      empresaId: 0,
      iva: 13,
      usuarios: [],
      sucursales: [],
      bodegas: [],
    }));
    const random = new Random(options.seed);
    const today = options.today ?? todayUtc();
    const counts: Record<string, number> = {};
    const skipped: BenchDataResult['skipped'] = [];
    for (const loader of LOADERS) {
      const client = await clientOf(loader.schema);
      const reason = await loader.missing(client);
      if (reason) {
        skipped.push({ schema: loader.schema, reason });
        progress.log(`${loader.schema}: not loaded (${reason})`);
        continue;
      }
      const ctx = { client, connect: () => connect(urlOf(loader.schema)), clientOf, companies, random, progress, today };
      Object.assign(counts, await loader.load(ctx));
    }

    const tables = Object.keys(counts);
    const step = progress.step('vacuum analyze', tables.length);
    for (const table of tables) {
      const [schema, name] = table.split('.') as [string, string];
      await (await clientOf(schema)).query(`vacuum (analyze) ${quoteIdent(schema)}.${quoteIdent(name)}`);
      step.add(1);
    }
    step.done();
    return {
      companies: companies.map((c) => ({ clave: c.plan.clave, nombre: c.plan.nombre, empresaId: c.empresaId, apiKey: c.plan.apiKey })),
      counts,
      skipped,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    const opened = await Promise.allSettled(clients.values());
    await Promise.all(opened.map((c) => (c.status === 'fulfilled' ? c.value.end() : undefined)));
  }
}
