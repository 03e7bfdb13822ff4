import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import type { SERVICES } from '@erp/contracts';
import type { DatabaseUrls } from '@erp/admin';
import { createDb, migrateSchema, type Migrations } from '@erp/db';
import { EXPORTS_SCHEMA, exportsMigrations } from '@erp/exports';
import { GATEWAY_SCHEMA, gatewayMigrations } from '@erp/gateway';
import { INVENTORY_SCHEMA, inventoryMigrations } from '@erp/inventory';
import { PACKAGES_SCHEMA, packagesMigrations } from '@erp/packages';
import { RETURNS_SCHEMA, returnsMigrations } from '@erp/returns';
import { SALES_SCHEMA, salesMigrations } from '@erp/sales';
import { SUBSCRIPTIONS_SCHEMA, subscriptionsMigrations } from '@erp/subscriptions';
import { WEBHOOK_INGEST_SCHEMA, webhookIngestMigrations } from '@erp/webhook-ingest';
import { PrivatePostgres } from '../reliability/support/private-infra';
import { eventually } from '@erp/testing';
import { Stack } from '../support/stack';

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const OPERATIONS = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');

/** Every service's schema and migrations: the runbook's SCHEMAS must name them all. */
const SCHEMAS: Record<(typeof SERVICES)[number], { schema: string; migrations: Migrations }> = {
  gateway: { schema: GATEWAY_SCHEMA, migrations: gatewayMigrations },
  sales: { schema: SALES_SCHEMA, migrations: salesMigrations },
  inventory: { schema: INVENTORY_SCHEMA, migrations: inventoryMigrations },
  returns: { schema: RETURNS_SCHEMA, migrations: returnsMigrations },
  packages: { schema: PACKAGES_SCHEMA, migrations: packagesMigrations },
  'webhook-ingest': { schema: WEBHOOK_INGEST_SCHEMA, migrations: webhookIngestMigrations },
  subscriptions: { schema: SUBSCRIPTIONS_SCHEMA, migrations: subscriptionsMigrations },
  exports: { schema: EXPORTS_SCHEMA, migrations: exportsMigrations },
};

/** The shell block that follows `<!-- runbook: NAME -->` in docs/operations.md. */
function runbookBlock(name: string): string {
  const match = new RegExp(`<!-- runbook: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(OPERATIONS);
  if (!match) throw new Error(`docs/operations.md has no block marked runbook: ${name}`);
  return match[1]!;
}

/** One statement on a fresh connection; resolves with its rows. */
async function query(connectionString: string, text: string): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(text)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

/**
 * The variables of docs/operations.md's "Back up" for servers of our own: the superuser, every
 * server as host:port, and where each schema lives as the auditor (DATABASE_URL, DATABASE_URL_<SCHEMA>).
 */
function runbookEnv(servers: readonly PrivatePostgres[], where: DatabaseUrls, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DATABASE_URL')));
  return {
    ...inherited,
    PGUSER: 'postgres',
    SERVERS: servers.map((server) => `127.0.0.1:${server.port}`).join(' '),
    DATABASE_URL: where.databaseUrl,
    ...Object.fromEntries(Object.entries(where.databaseUrls ?? {}).map(([schema, url]) => [`DATABASE_URL_${schema.toUpperCase()}`, url])),
    ...extra,
  };
}

/** Runs the block `name` of docs/operations.md with bash, as an operator would paste it; resolves with its stdout. */
async function runBlock(name: string, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    return (await execFileAsync('bash', ['-euo', 'pipefail', '-c', runbookBlock(name)], { cwd: ROOT, env, timeout: 120_000 })).stdout;
  } catch (err) {
    const failure = err as Error & { stderr?: string; stdout?: string };
    throw new Error(`runbook block ${name} failed:\n${failure.stderr ?? ''}${failure.stdout ?? ''}`, { cause: err });
  }
}

/** The schema the runbook's second server holds, as a deployment that moved it there (`DATABASE_URL_SALES`). */
const MOVED = SALES_SCHEMA;

/**
 * The backup and restore runbook of docs/operations.md, its blocks run as written by bash against
 * two Postgres servers of its own (the roles and CONNECT grants it sets are server-wide, so never
 * on the shared one), the sales schema on the second: roles per server, migrations as the owners,
 * data, a dump of each server as its auditor, a restore of each into a new database, the switch,
 * the next migrations as the owners, the audit across both.
 */
describe('the backup and restore runbook, per server', () => {
  let first: PrivatePostgres;
  let second: PrivatePostgres;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const schemas = Object.values(SCHEMAS).map((s) => s.schema);
  const serverOf = (schema: string) => (schema === MOVED ? second : first);
  const url = (role: string, database: string, server = first) => `postgres://${role}@127.0.0.1:${server.port}/${database}`;
  const urlOf = (schema: string, role: string, database = 'erp') => url(role, database, serverOf(schema));

  const run = (block: string) => runBlock(block, env);
  const migrateAsOwners = async (extra: Partial<Record<string, Migrations>> = {}) => {
    for (const { schema, migrations } of Object.values(SCHEMAS)) {
      const db = createDb<unknown>({ connectionString: urlOf(schema, `erp_${schema}_owner`), max: 1 });
      try {
        await migrateSchema(db, schema, { ...migrations, ...extra[schema] });
      } finally {
        await db.destroy();
      }
    }
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-runbook-'));
    first = await PrivatePostgres.start(path.join(dir, 'pg'));
    second = await PrivatePostgres.start(path.join(dir, 'pg-sales'));
    for (const server of [first, second]) await query(server.url(), 'create database erp');
    env = runbookEnv(
      [first, second],
      { databaseUrl: url('auditor', 'erp'), databaseUrls: { [MOVED]: url('auditor', 'erp', second) } },
      { SCHEMAS: schemas.join(' '), BACKUP: path.join(dir, 'backup') },
    );
    await run('roles');
    await migrateAsOwners();
  }, 180_000);
  afterAll(async () => {
    first?.stop();
    second?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names every service schema', () => {
    expect(OPERATIONS).toContain(`export SCHEMAS="${schemas.join(' ')}"`);
  });

  it('gives each server the roles of the schemas that live on it, and nothing else', async () => {
    const rolesOn = async (server: PrivatePostgres) =>
      (await query(server.url(), `select rolname from pg_roles where rolname like 'erp\\_%' order by 1`)).map((r) => r.rolname);
    expect(await rolesOn(second)).toEqual([`erp_${MOVED}`, `erp_${MOVED}_owner`]);
    expect(await rolesOn(first)).toEqual(
      schemas
        .filter((s) => s !== MOVED)
        .flatMap((s) => [`erp_${s}`, `erp_${s}_owner`])
        .sort(),
    );
    // Each server's auditor reads the schemas of that server.
    expect(await query(url('auditor', 'erp', second), `select has_schema_privilege('${MOVED}', 'usage') as usage`)).toEqual([
      { usage: true },
    ]);
    expect(await query(url('auditor', 'erp'), `select has_schema_privilege('${GATEWAY_SCHEMA}', 'usage') as usage`)).toEqual([
      { usage: true },
    ]);
  });

  it('keeps every role to the system’s database', async () => {
    for (const [server, runtime] of [
      [first, `erp_${GATEWAY_SCHEMA}`],
      [second, `erp_${MOVED}`],
    ] as const) {
      await expect(query(url(runtime, 'postgres', server), 'select 1')).rejects.toThrow(/permission denied for database "postgres"/);
      await expect(query(url('auditor', 'postgres', server), 'select 1')).rejects.toThrow(/permission denied for database "postgres"/);
      await expect(query(url(runtime, 'erp', server), 'select 1 as ok')).resolves.toEqual([{ ok: 1 }]);
    }
  });

  it('backs up each server as its auditor, restores each schema to its owner on its server, and the next migrations and the audit run on them', async () => {
    // What the services wrote, as their runtime roles, on both servers.
    const [empresa] = await query(
      urlOf(GATEWAY_SCHEMA, 'erp_gateway'),
      `insert into gateway.empresas (nombre) values ('Empresa Respaldada') returning id`,
    );
    await query(urlOf(GATEWAY_SCHEMA, 'erp_gateway'), `insert into gateway.empresas (nombre) values ('Empresa Dos')`);
    await query(
      urlOf(MOVED, 'erp_sales'),
      `insert into sales.canales (empresa_id, nombre) values (${Number(empresa!.id)}, 'Tienda Respaldada')`,
    );

    await run('backup');
    const dumps = fs.readdirSync(env.BACKUP!).sort();
    expect(dumps).toEqual(
      env
        .SERVERS!.split(' ')
        .map((server) => `${server}.dump`)
        .sort(),
    );
    // Damage after the backup, on both servers: the restore brings the books back to it.
    await query(urlOf(GATEWAY_SCHEMA, 'erp_gateway'), `update gateway.empresas set nombre = 'Dañada'`);
    await query(urlOf(MOVED, 'erp_sales'), `update sales.canales set nombre = 'Dañado'`);

    await run('restore');
    await run('switch');

    expect(await query(urlOf(GATEWAY_SCHEMA, 'postgres'), 'select nombre from gateway.empresas order by id')).toEqual([
      { nombre: 'Empresa Respaldada' },
      { nombre: 'Empresa Dos' },
    ]);
    expect(await query(urlOf(MOVED, 'postgres'), 'select nombre from sales.canales')).toEqual([{ nombre: 'Tienda Respaldada' }]);
    expect(await query(urlOf(GATEWAY_SCHEMA, 'postgres', 'erp_before_restore'), `select distinct nombre from gateway.empresas`)).toEqual([
      { nombre: 'Dañada' },
    ]);
    // Each server holds its own schemas only, and every table, sequence and function belongs to its schema's owner again.
    for (const server of [first, second]) {
      const restored = url('postgres', 'erp', server);
      const held = schemas.filter((s) => serverOf(s) === server);
      const present = await query(restored, `select nspname from pg_namespace where nspname = any('{${schemas.join(',')}}') order by 1`);
      expect(present.map((r) => r.nspname)).toEqual([...held].sort());
      const strangers = await query(
        restored,
        `select n.nspname as schema, c.relname as name, pg_get_userbyid(c.relowner) as owner
           from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = any('{${held.join(',')}}') and pg_get_userbyid(c.relowner) <> 'erp_' || n.nspname || '_owner'
         union all
         select n.nspname, p.proname, pg_get_userbyid(p.proowner)
           from pg_proc p join pg_namespace n on n.oid = p.pronamespace
          where n.nspname = any('{${held.join(',')}}') and pg_get_userbyid(p.proowner) <> 'erp_' || n.nspname || '_owner'`,
      );
      expect(strangers).toEqual([]);
    }
    expect(
      (
        await query(
          urlOf(MOVED, 'postgres'),
          `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'sales'`,
        )
      )[0]!.n,
    ).toBeGreaterThan(5);

    // The runtime roles write again, with the sequences where the backup left them.
    const [next] = await query(
      urlOf(GATEWAY_SCHEMA, 'erp_gateway'),
      `insert into gateway.empresas (nombre) values ('Empresa Nueva') returning id`,
    );
    expect(Number(next!.id)).toBe(Number(empresa!.id) + 2);
    await query(
      urlOf(MOVED, 'erp_sales'),
      `insert into sales.canales (empresa_id, nombre) values (${Number(empresa!.id)}, 'Tienda Nueva')`,
    );

    // The next release's migrations, as the owners: one changes a restored table, which only its owner may.
    await migrateAsOwners({
      [MOVED]: {
        '9999-runbook-next-release': {
          up: (db) => sql`alter table sales.canales add column notas text`.execute(db).then(() => undefined),
        },
      },
    });
    expect(await query(urlOf(MOVED, 'erp_sales'), `select notas from sales.canales where nombre = 'Tienda Nueva'`)).toEqual([
      { notas: null },
    ]);

    // Exit 0 (run() rejects otherwise), every invariant listed as held, read from both servers.
    const audit = (await run('audit')).trim().split('\n');
    expect(audit.length).toBeGreaterThan(5);
    expect(audit.filter((line) => !line.startsWith('ok  '))).toEqual([]);
    const report = JSON.parse(await runBlock('audit-company', { ...env, EMPRESA: String(empresa!.id) })) as { ok: boolean };
    expect(report.ok).toBe(true);
  });
});

/** The back-office commands of docs/operations.md, run as written against the services on NATS (as after the port-forward). */
describe('the back-office runbook', () => {
  let stack: Stack;
  let env: NodeJS.ProcessEnv;
  const run = async (block: string, extra: Record<string, string> = {}) =>
    JSON.parse(await runBlock(block, { ...env, ...extra })) as unknown;
  const inventoryWith = (key: string) =>
    fetch(`${stack.baseUrl}/api/external/v1/inventory`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status);

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook-ingest'] });
    env = {
      ...process.env,
      NATS_URL: stack.iso.natsUrl,
      SUBJECT_PREFIX: stack.iso.subjectPrefix,
      DATABASE_URL: stack.iso.databaseUrl,
      FIXTURE: path.join(ROOT, 'test', 'fixtures', 'demo.json'),
      LOG_LEVEL: 'silent',
    };
  }, 120_000);
  afterAll(() => stack?.stop());

  it('seeds a company, adds and revokes a key, rotates a webhook token, lists and replays failed deliveries, and audits it', async () => {
    const seeded = (await run('seed')) as { empresas: { demo: { id: number; integraciones: { woo: { id: number; token: string } } } } };
    const empresa = String(seeded.empresas.demo.id);

    const created = (await run('apikey-create', { EMPRESA: empresa })) as { id: number; key: string };
    expect(await inventoryWith(created.key)).toBe(200);
    await run('apikey-revoke', { API_KEY_ID: String(created.id) });
    await eventually(async () => expect(await inventoryWith(created.key)).toBe(401), 20_000);

    const woo = seeded.empresas.demo.integraciones.woo;
    const rotated = (await run('webhook-rotate', { INTEGRACION: String(woo.id) })) as { token: string };
    expect(rotated.token).toEqual(expect.any(String));
    expect(rotated.token).not.toBe(woo.token);

    // Nothing failed in the demo company: both answer (exit 0) with a JSON document, nothing to replay.
    expect(await run('webhooks-failed', { EMPRESA: empresa })).toEqual(expect.any(Object));
    expect(await run('webhooks-replay', { EMPRESA: empresa })).toEqual(expect.any(Object));

    const audit = (await runBlock('audit-all', env)).trim().split('\n');
    expect(audit.filter((line) => !line.startsWith('ok  '))).toEqual([]);
    expect(JSON.parse(await runBlock('audit-company', { ...env, EMPRESA: empresa }))).toMatchObject({ ok: true });
  });
});
