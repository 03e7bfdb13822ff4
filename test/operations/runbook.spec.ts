import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import type { SERVICES } from '@erp/contracts';
import type { DatabaseUrls } from '@erp/back-office';
import { createDb, migrateSchema, type Migrations } from '@erp/db';
import { EXPORTS_SCHEMA, exportsMigrations } from '@erp/exports';
import { GATEWAY_SCHEMA, gatewayMigrations } from '@erp/gateway';
import { INVENTORY_SCHEMA, inventoryMigrations } from '@erp/inventory';
import { PACKAGES_SCHEMA, packagesMigrations } from '@erp/packages';
import { RETURNS_SCHEMA, returnsMigrations } from '@erp/returns';
import { SALES_SCHEMA, salesMigrations } from '@erp/sales';
import { SUBSCRIPTIONS_SCHEMA, subscriptionsMigrations } from '@erp/subscriptions';
import { WEBHOOK_INGEST_SCHEMA, webhookIngestMigrations } from '@erp/webhook-ingest';
import { parse } from 'yaml';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import type { IPod } from 'kubernetes-models/v1/Pod';
import { passwordVariable } from '@erp/bus';
import { ADMIN_IDENTITY } from '@erp/contracts';
import { PrivatePostgres, postgresBinDir } from '../reliability/support/private-infra';
import { openToolbox, type Toolbox } from '../chart/toolbox';
import { named, ofKind, parseObjects, validateObject, type KubeObject } from '../chart/kube-objects';
import { ClusterStandIn } from './cluster-stand-in';
import { eventually, freePort } from '@erp/testing';
import { API, SALES_KEY_A, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { Stack, json } from '../support/stack';

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

/**
 * Runs the block `name` of docs/operations.md with bash, as an operator would paste it; resolves
 * with its stdout. `asPostgres`: as the user that runs Postgres (what starts a server refuses root).
 */
async function runBlock(
  name: string | string[],
  env: NodeJS.ProcessEnv,
  options: { asPostgres?: boolean; cwd?: string } = {},
): Promise<string> {
  // Several blocks run as one script, as an operator pastes them one after the other into one shell.
  const bash = ['bash', '-euo', 'pipefail', '-c', [name].flat().map(runbookBlock).join('\n')];
  const [file, ...args] = options.asPostgres && process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...bash] : bash;
  try {
    return (await execFileAsync(file!, args, { cwd: options.cwd ?? ROOT, env, timeout: 120_000 })).stdout;
  } catch (err) {
    const failure = err as Error & { stderr?: string; stdout?: string };
    throw new Error(`runbook block ${name} failed:\n${failure.stderr ?? ''}${failure.stdout ?? ''}`, { cause: err });
  }
}

const CHART_VALUES = parse(fs.readFileSync(path.join(ROOT, 'charts', 'erp', 'values.yaml'), 'utf8')) as {
  migrations: { order: string[] };
  existingSecrets: { nats: { name: string; tlsSecret: string } };
  monitoring: { audit: { databaseSecret: { name: string; key: string } } };
};
const DIGEST = `sha256:${'5e'.repeat(32)}`;

/** The values file of "Upgrade": the documented one, each placeholder a digest. */
function digestsFile(dir: string): string {
  const block = /```yaml\n(services:\n[\s\S]*?)```/.exec(OPERATIONS)![1]!;
  const file = path.join(dir, 'digests-1.7.0.yaml');
  fs.writeFileSync(file, block.replaceAll('sha256:<64 hex digits>', DIGEST));
  return file;
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

  it('counts the migration Jobs and the images as the chart and the repository have them, in the order the chart runs them', () => {
    const words: Record<string, number> = { seven: 7, eight: 8, nine: 9, ten: 10 };
    const prose = OPERATIONS.replace(/\s+/g, ' ');
    const [, count, order] = /all (\w+): ([a-z-]+(?:, [a-z-]+)*);/.exec(prose)!;
    expect(order!.split(', ')).toEqual(CHART_VALUES.migrations.order);
    expect(words[count!]).toBe(Object.keys(SCHEMAS).length);
    expect([...CHART_VALUES.migrations.order].sort()).toEqual(Object.keys(SCHEMAS).sort());
    expect(words[/build the (\w+) images/.exec(prose)![1]!]).toBe(Object.keys(SCHEMAS).length);
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

/**
 * "Moving a schema to its own server" of docs/operations.md, its blocks run as written: the sales
 * schema moves from a server holding every schema to a promoted physical replica of it while the
 * services run (the services here connect as the superuser, as the chaos run's do). A partner's
 * change-feed cursor taken before the move reads on after it, missing nothing; the old server's
 * other schemas carry on; each server ends with its own schemas only, and the audit reads both.
 */
describe('moving a schema to its own server: a promoted physical replica', () => {
  let dir: string;
  let old: PrivatePostgres;
  let standby: PrivatePostgres | undefined;
  let stack: Stack;
  let env: NodeJS.ProcessEnv;
  let a: SalesRefs;
  const sales: number[] = [];
  let cursor: string;
  let stampsBefore: bigint;
  const schemas = Object.values(SCHEMAS).map((s) => s.schema);
  const newPort = freePort();

  const run = (block: string, options: { asPostgres?: boolean } = {}) => runBlock(block, env, options);
  const api = async (pathAndQuery: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await stack.api(`${API}${pathAndQuery}`, {
      key: SALES_KEY_A,
      ...(init.method ? { method: init.method } : {}),
      ...(init.body ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(init.body) } : {}),
    });
    return {
      status: res.status,
      body: (await json(res)) as {
        data: Array<{ id: number; observaciones: string | null }>;
        pagination: { resume_cursor: string; next_cursor: string | null };
      },
    };
  };
  const pendiente = async (observaciones: string) => {
    const res = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, {
        estado: 'Pendiente',
        id_cliente: a.clientes.libre,
        observaciones,
        detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }],
      }),
    );
    expect(res.status).toBe(201);
    return res.body.data.id as number;
  };
  const edit = async (id: number, observaciones: string) =>
    expect(
      (await api(`/sales/${id}`, { method: 'PUT', body: { observaciones, detalles: [{ id_producto: a.productos.mouse, cantidad: 2 }] } }))
        .status,
    ).toBe(200);
  /** Every page of the feed from `from` (the start when absent): the rows in order and where to resume. */
  const feed = async (from?: string) => {
    const rows: Array<{ id: number; observaciones: string | null }> = [];
    let after = from;
    for (;;) {
      const page = await api(`/sales?order_by=updated_at&per_page=2${after ? `&cursor=${after}` : ''}`);
      expect(page.status).toBe(200);
      rows.push(...page.body.data.map(({ id, observaciones }) => ({ id, observaciones })));
      after = page.body.pagination.resume_cursor;
      if (!page.body.pagination.next_cursor) return { rows, resume: after };
    }
  };
  const maxStamp = async (url: string) =>
    BigInt(String((await query(url, `select coalesce(max(cambio_xid::text::numeric), 0)::text as x from sales.ventas`))[0]!.x));

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-move-'));
    // A standby needs max_connections no lower than its primary's: the old server keeps the default.
    old = await PrivatePostgres.start(path.join(dir, 'pg-old'), ['max_connections=100', 'full_page_writes=on']);
    await query(old.url(), 'create database erp');
    // A server in service has handed out many transaction ids; a fresh one starts below a thousand.
    await query(old.url(), `do $$ begin for i in 1..20000 loop perform pg_current_xact_id(); commit; end loop; end $$`);
    const newDir = path.join(dir, 'pg-new');
    fs.mkdirSync(newDir);
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', newDir]);
    env = runbookEnv(
      [old],
      { databaseUrl: `postgres://auditor@127.0.0.1:${old.port}/erp` },
      {
        SCHEMAS: schemas.join(' '),
        SCHEMA: SALES_SCHEMA,
        OLD_SERVER: `127.0.0.1:${old.port}`,
        NEW_SERVER: `127.0.0.1:${await newPort}`,
        NEW_PGDATA: path.join(newDir, 'data'),
        REPLICATION_USER: 'postgres',
        PATH: `${postgresBinDir()}:${process.env.PATH ?? ''}`,
      },
    );
    await run('roles');
    const oldErp = old.url('erp');
    // Every schema is on the old server; the services the test drives migrate their own at start.
    for (const [service, { schema, migrations }] of Object.entries(SCHEMAS)) {
      if (['gateway', 'inventory', 'sales'].includes(service)) continue;
      const db = createDb<unknown>({ connectionString: oldErp, max: 1 });
      try {
        await migrateSchema(db, schema, migrations);
      } finally {
        await db.destroy();
      }
    }
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales'],
      databases: { gateway: oldErp, inventory: oldErp, sales: oldErp },
    });
    a = refsOf(await stack.seed(salesFixture()), 'a');
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    standby?.stop();
    old?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts a standby of the old server from a base backup, which follows it while the service runs', async () => {
    sales.push(await pendiente('uno'), await pendiente('dos'));
    const before = await feed();
    expect(before.rows.map((r) => r.id)).toEqual(sales);
    cursor = before.resume;

    await run('move-standby', { asPostgres: true });
    standby = new PrivatePostgres(path.join(dir, 'pg-new'), await newPort, postgresBinDir());
    await edit(sales[0]!, 'uno editada antes del traslado');
    await run('move-caught-up');
    const copy = standby.url('erp');
    expect(await query(copy, 'select pg_is_in_recovery() as standby')).toEqual([{ standby: true }]);
    expect(await query(copy, `select observaciones from sales.ventas where id = ${sales[0]}`)).toEqual([
      { observaciones: 'uno editada antes del traslado' },
    ]);
  });

  it('tells which server each endpoint reaches, that the standby streams, and how far behind it is', async () => {
    const out = await runBlock('postgres-endpoints', { ...env, RW_URL: old.url(), RO_URL: standby!.url() });
    const [primary, replica, streaming, lag, ...rest] = out.trim().split('\n');
    expect({ primary, replica, rest }).toEqual({ primary: 'f', replica: 't', rest: [] });
    // This standby is asynchronous (nothing names it in synchronous_standby_names); a cluster's synchronous one says sync.
    expect(streaming).toMatch(/^[^|]*\|streaming\|async\|\d\d:\d\d:\d\d/);
    expect(lag).toMatch(/^\d\d:\d\d:\d\d/);
  });

  it('promotes it once the service stopped and it caught up: the service carries on there, every partner’s cursor with it', async () => {
    await stack.stopService('sales');
    await run('move-caught-up');
    stampsBefore = await maxStamp(old.url('erp'));
    await run('move-promote');
    stack.moveDatabase('sales', standby!.url('erp'));
    await stack.startService('sales');

    // Written on the new server: an edit of an older sale and a new one, stamped past everything the old server stamped.
    await edit(sales[1]!, 'dos editada en el servidor nuevo');
    const reservations = () => query(old.url('erp'), 'select count(*)::int as n from inventory.reservas');
    const reservationsBefore = Number((await reservations())[0]!.n);
    sales.push(await pendiente('tres'));
    expect(await maxStamp(standby!.url('erp'))).toBeGreaterThan(stampsBefore);
    expect(await maxStamp(old.url('erp'))).toBe(stampsBefore);

    // The cursor a partner took before the move answers every change since, each once, in order.
    const after = await feed(cursor);
    expect(after.rows).toEqual([
      { id: sales[0], observaciones: 'uno editada antes del traslado' },
      { id: sales[1], observaciones: 'dos editada en el servidor nuevo' },
      { id: sales[2], observaciones: 'tres' },
    ]);
    // Nothing vanished from the feed read from the start, and its resume cursor stops after the last change.
    const whole = await feed();
    expect(whole.rows.map((r) => r.id).sort((x, y) => x - y)).toEqual(sales);
    expect((await feed(whole.resume)).rows).toEqual([]);
    // The old server's other schemas carry on: the new sale reserved its stock there.
    expect(Number((await reservations())[0]!.n)).toBe(reservationsBefore + 1);
  });

  it('leaves each server with its own schemas and roles, and the audit reads each where it lives', async () => {
    env = { ...env, DATABASE_URL_SALES: `postgres://auditor@${env.NEW_SERVER}/erp` };
    await run('move-tidy-new');
    const ours = async (url: string) => ({
      schemas: (await query(url, `select nspname from pg_namespace where nspname = any('{${schemas.join(',')}}') order by 1`)).map(
        (r) => r.nspname,
      ),
      roles: (await query(url, `select rolname from pg_roles where rolname like 'erp\\_%' order by 1`)).map((r) => r.rolname),
    });
    expect(await ours(standby!.url('erp'))).toEqual({ schemas: [SALES_SCHEMA], roles: ['erp_sales', 'erp_sales_owner'] });

    // The services read their tables as the superuser here: the audit too, from both servers.
    const audit = await runBlock('audit-all', { ...env, DATABASE_URL: old.url('erp'), DATABASE_URL_SALES: standby!.url('erp') });
    expect(
      audit
        .trim()
        .split('\n')
        .filter((line) => !line.startsWith('ok  ')),
    ).toEqual([]);

    await run('move-tidy-old');
    const stayed = schemas.filter((s) => s !== SALES_SCHEMA);
    expect(await ours(old.url('erp'))).toEqual({
      schemas: [...stayed].sort(),
      roles: stayed.flatMap((s) => [`erp_${s}`, `erp_${s}_owner`]).sort(),
    });
    // And the system still takes sales, each schema on its server.
    sales.push(await pendiente('cuatro'));
    expect((await feed(cursor)).rows.map((r) => r.id)).toEqual([sales[0], sales[1], sales[2], sales[3]]);
  });

  it('would lose changes on a copy of the rows instead (why the docs move a replica): restored on a fresh server, they hide behind its transaction counter', async () => {
    const fresh = await PrivatePostgres.start(path.join(dir, 'pg-fresh'));
    try {
      await query(fresh.url(), 'create database erp');
      const dump = path.join(dir, 'sales.dump');
      execFileSync('pg_dump', ['--format=custom', '--schema', SALES_SCHEMA, '--file', dump, standby!.url('erp')]);
      execFileSync('pg_restore', ['--no-owner', '--no-privileges', '--dbname', fresh.url('erp'), dump]);
      const visible = `select count(*)::int as n from sales.ventas where cambio_xid < pg_snapshot_xmin(pg_current_snapshot())`;
      // Every sale is in the copy, but the feed's horizon on the fresh server answers none of them…
      expect(await query(fresh.url('erp'), 'select count(*)::int as n from sales.ventas')).toEqual([{ n: sales.length }]);
      expect(await query(fresh.url('erp'), visible)).toEqual([{ n: 0 }]);
      // …and a change made there is stamped behind the cursors partners hold.
      const [changed] = await query(
        fresh.url('erp'),
        `update sales.ventas set observaciones = 'copia' where id = ${sales[0]} returning cambio_xid::text as x`,
      );
      expect(BigInt(String(changed!.x))).toBeLessThan(stampsBefore);
    } finally {
      fresh.stop();
    }
  });
});

/**
 * "Upgrade" and "Roll back" of docs/operations.md, their helm lines run as written through the
 * cluster stand-in: the upgrade renders the chart with its flags and values, history and rollback
 * are parsed by helm up to where it needs the cluster.
 */
describe('the upgrade and rollback runbook, helm against the rendered chart', () => {
  let toolbox: Toolbox;
  let dir: string;
  let standIn: ClusterStandIn;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    toolbox = openToolbox();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-upgrade-'));
    // The checkout the commands run in: the chart, and the release's digests beside it.
    fs.symlinkSync(path.join(ROOT, 'charts'), path.join(dir, 'charts'));
    digestsFile(dir);
    const bin = path.dirname(toolbox.writeFile('.keep', ''));
    standIn = await ClusterStandIn.start(dir, { helm: path.join(bin, 'helm'), kubectl: path.join(bin, 'kubectl') });
    env = { ...process.env, ...standIn.env({}, {}), REVISION: '3' };
  });
  afterAll(async () => {
    await standIn?.stop();
    toolbox?.dispose();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('installs every image by the digest its push answered, with alerts that link to the release’s docs/alerts.md', async () => {
    // The documented file names every service of the chart.
    expect(
      Object.keys((parse(fs.readFileSync(path.join(dir, 'digests-1.7.0.yaml'), 'utf8')) as { services: object }).services).sort(),
    ).toEqual(Object.keys(SCHEMAS).sort());
    await runBlock('upgrade', env, { cwd: dir });
    const objects = parseObjects(standIn.rendered());
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();
    for (const service of Object.keys(SCHEMAS))
      expect(named(ofKind<IDeployment>(objects, 'Deployment'), `erp-${service}`).spec!.template.spec!.containers[0]!.image).toBe(
        `ghcr.io/acme/erp-${service}:1.7.0@${DIGEST}`,
      );
    const rule = ofKind<
      KubeObject & { spec: { groups: Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }> } }
    >(objects, 'PrometheusRule')[0]!;
    expect(rule.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
    const links = rule.spec.groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.annotations!.runbook_url!] : [])));
    expect(links.filter((l) => !l.startsWith('https://github.com/acme/erp/blob/1.7.0/docs/alerts.md#'))).toEqual([]);
    expect(standIn.helmLog()).toEqual([
      expect.stringMatching(/^upgrade rendered: upgrade --install erp charts\/erp -n erp --wait --timeout 15m/),
    ]);
  });

  it('lists the revisions and rolls back to one: helm takes both command lines, and refuses a misspelt one the same way', async () => {
    await runBlock('rollback', env, { cwd: dir });
    expect(standIn.helmLog().slice(-2)).toEqual([
      'parsed up to the cluster: history erp -n erp --max 10',
      'parsed up to the cluster: rollback erp 3 -n erp --wait --timeout 15m',
    ]);
    const helm = (args: string) => execFileAsync('bash', ['-c', `helm ${args}`], { env, cwd: dir });
    await expect(helm('rollback erp 3 -n erp --wiat')).rejects.toThrow(/unknown flag: --wiat/);
    await expect(helm('history -n erp')).rejects.toThrow(/"helm history" requires 1 argument/);
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
    const scoped = (await run('apikey-create-scoped', { EMPRESA: empresa })) as { key: string; alcances: string[] };
    expect(scoped.alcances).toEqual(['sales:read', 'inventory:read']);
    expect(await inventoryWith(scoped.key)).toBe(200);
    const write = await fetch(`${stack.baseUrl}/api/external/v1/sales`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${scoped.key}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect([write.status, write.headers.get('x-accepted-scopes')]).toEqual([403, 'sales:write']);

    const woo = seeded.empresas.demo.integraciones.woo;
    const rotated = (await run('webhook-rotate', { INTEGRACION: String(woo.id) })) as { token: string };
    expect(rotated.token).toEqual(expect.any(String));
    expect(rotated.token).not.toBe(woo.token);

    // Nothing failed in the demo company: both answer (exit 0) with a JSON document, nothing to replay.
    expect(await run('webhooks-failed', { EMPRESA: empresa })).toEqual(expect.any(Object));
    expect(await run('webhooks-replay', { EMPRESA: empresa })).toEqual(expect.any(Object));
    // The demo's shop has no API to compare with: webhook-ingest answers the admin identity so.
    await expect(run('drift', { INTEGRACION: String(woo.id) })).rejects.toThrow(/NOT_FOUND: .*sin API de la tienda/);

    const audit = (await runBlock('audit-all', env)).trim().split('\n');
    expect(audit.filter((line) => !line.startsWith('ok  '))).toEqual([]);
    expect(JSON.parse(await runBlock('audit-company', { ...env, EMPRESA: empresa }))).toMatchObject({ ok: true });
  }, 120_000);

  it('runs the audit, a back-office command and the drift check in a pod of the release’s image, as kubectl makes it from the documented lines', async () => {
    const toolbox = openToolbox();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-admin-pod-'));
    const bin = path.dirname(toolbox.writeFile('.keep', ''));
    const standIn = await ClusterStandIn.start(dir, { helm: path.join(bin, 'helm'), kubectl: path.join(bin, 'kubectl') });
    try {
      // The namespace as the documented upgrade leaves it; its NATS and database are the stack's.
      const digests = digestsFile(dir);
      const runbook = 'monitoring.prometheusRule.runbookBaseUrl=https://github.com/acme/erp/blob/1.7.0/docs/alerts.md';
      const objects = parseObjects(
        await toolbox.helm(['template', 'erp', path.join(ROOT, 'charts', 'erp'), '-n', 'erp', '--values', digests, '--set', runbook]),
      );
      standIn.serve(objects);
      const gateway = named(ofKind<IDeployment>(objects, 'Deployment'), 'erp-gateway').spec!.template.spec!;
      const config = named(ofKind<KubeObject & { data: Record<string, string> }>(objects, 'ConfigMap'), 'erp-config').data;
      const { nats } = CHART_VALUES.existingSecrets;
      const auditor = CHART_VALUES.monitoring.audit.databaseSecret;
      const podEnv = {
        ...env,
        ...standIn.env(
          { [auditor.name]: { [auditor.key]: stack.iso.databaseUrl }, [nats.name]: { [passwordVariable(ADMIN_IDENTITY)]: '' } },
          { 'erp-config': { ...config, NATS_URL: stack.iso.natsUrl, SUBJECT_PREFIX: stack.iso.subjectPrefix } },
        ),
      };
      const confined = (pod: IPod) => {
        expect(() => validateObject(pod as KubeObject)).not.toThrow();
        const container = pod.spec!.containers[0]!;
        expect(container.image).toBe(gateway.containers[0]!.image);
        expect(container.command).toEqual(['node', '/app/services/admin/dist/cli.js']);
        expect(pod.spec!.automountServiceAccountToken).toBe(false);
        expect(pod.spec!.securityContext).toEqual(gateway.securityContext);
        expect(container.securityContext).toEqual(gateway.containers[0]!.securityContext);
        expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        return container;
      };

      const audit = (await runBlock(['admin-image', 'admin-pods', 'admin-run-audit'], podEnv)).trim().split('\n');
      expect(audit.length).toBeGreaterThan(5);
      expect(audit.filter((line) => !line.startsWith('ok  '))).toEqual([]);
      const auditPod = standIn.lastPod() as IPod;
      expect(confined(auditPod).envFrom).toEqual([{ secretRef: { name: auditor.name } }]);
      expect(auditPod.spec!.containers[0]!.args).toEqual(['audit']);
      // The labels of the chart's audit CronJob, which its NetworkPolicy selects.
      const cronJobLabels = parseObjects(
        await toolbox.helm([
          'template',
          'erp',
          path.join(ROOT, 'charts', 'erp'),
          '-n',
          'erp',
          '--values',
          digests,
          '--set',
          runbook,
          '--set',
          'monitoring.audit.enabled=true',
        ]),
      ).find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'erp-audit') as KubeObject & {
        spec: { podSelector: { matchLabels: Record<string, string> } };
      };
      expect(auditPod.metadata!.labels).toEqual(cronJobLabels.spec.podSelector.matchLabels);

      const empresas = JSON.parse(await runBlock(['admin-image', 'admin-pods', 'admin-run-empresas'], podEnv)) as unknown;
      // What the same command answers from a checkout, through the stack's NATS.
      const { stdout } = await execFileAsync('npm', ['run', '--silent', 'admin', '--', 'empresas'], { cwd: ROOT, env });
      expect(empresas).toEqual(JSON.parse(stdout));
      expect(Array.isArray(empresas)).toBe(true);
      const adminPod = standIn.lastPod() as IPod;
      const container = confined(adminPod);
      expect(container.args).toEqual(['empresas']);
      expect(container.envFrom).toEqual([{ configMapRef: { name: 'erp-config' } }]);
      // The admin identity's password alone, and the CA the services get (the stand-in's NATS is plaintext: run-pod.ts leaves it out).
      const servedEnv = gateway.containers[0]!.env!;
      expect(container.env).toEqual(
        expect.arrayContaining([
          { name: 'NATS_USER', value: ADMIN_IDENTITY },
          { name: 'NATS_PASSWORD', valueFrom: { secretKeyRef: { name: nats.name, key: passwordVariable(ADMIN_IDENTITY) } } },
          servedEnv.find((e) => e.name === 'NATS_TLS_CA_FILE'),
        ]),
      );
      const served = gateway.volumes!.find((v) => v.name === 'nats-tls')!.secret!;
      expect(served.secretName).toBe(nats.tlsSecret);
      // The chart writes `defaultMode: 0440`, octal to Kubernetes (YAML 1.1), 440 to this YAML 1.2 parser.
      expect(adminPod.spec!.volumes).toContainEqual({
        name: 'nats-tls',
        secret: { secretName: served.secretName, defaultMode: parseInt(String(served.defaultMode), 8) },
      });
      expect(container.volumeMounts).toContainEqual(gateway.containers[0]!.volumeMounts!.find((m) => m.name === 'nats-tls'));

      // The nightly drift check by hand: the CronJob's command, environment and labels (its NetworkPolicy).
      const drift = JSON.parse(await runBlock(['admin-image', 'admin-pods', 'admin-run-drift'], podEnv)) as unknown;
      expect(Array.isArray(drift)).toBe(true);
      const driftPod = standIn.lastPod() as IPod;
      const driftContainer = confined(driftPod);
      const nightly = named(ofKind<ICronJob>(objects, 'CronJob'), 'erp-shop-drift').spec!.jobTemplate.spec!.template;
      const nightlyContainer = nightly.spec!.containers[0]!;
      expect([...driftContainer.command!, ...driftContainer.args!]).toEqual([...nightlyContainer.command!, ...nightlyContainer.args!]);
      expect(driftContainer.envFrom).toEqual(nightlyContainer.envFrom);
      expect(driftContainer.env).toEqual(nightlyContainer.env);
      const driftPolicy = named(
        ofKind<KubeObject & { spec: { podSelector: { matchLabels: Record<string, string> } } }>(objects, 'NetworkPolicy'),
        'erp-shop-drift',
      );
      expect(driftPod.metadata!.labels).toEqual(driftPolicy.spec.podSelector.matchLabels);
      expect(nightly.metadata!.labels).toMatchObject(driftPolicy.spec.podSelector.matchLabels);
    } finally {
      await standIn.stop();
      toolbox.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
