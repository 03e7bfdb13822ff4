import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DEFAULT_CONNECTION_LIMITS, auditorStatements, createDb, migrateSchema, schemaRoleStatements, type SchemaRoles } from '@erp/db';
import { GATEWAY_SCHEMA, gatewayMigrations } from '@erp/gateway';
import { WEBHOOK_INGEST_SCHEMA, webhookIngestMigrations } from '@erp/webhook-ingest';
import { isolate, type Isolation } from '@erp/testing';

/** Roles are global to the Postgres server: a suffix keeps this run's apart from any other's. */
const run = randomBytes(4).toString('hex');
const rolesOf = (schema: string): SchemaRoles => ({ schema, owner: `erp_${run}_${schema}_owner`, runtime: `erp_${run}_${schema}` });
const gateway = rolesOf(GATEWAY_SCHEMA);
const webhooks = rolesOf(WEBHOOK_INGEST_SCHEMA);
const auditor = `erp_${run}_auditor`;

describe('Postgres roles per service', () => {
  let iso: Isolation;
  const as = (role: string) => {
    const url = new URL(iso.databaseUrl);
    url.username = role;
    return url.toString();
  };
  /** Runs one statement as `role`; resolves with the rows, or the error Postgres answered. */
  const query = async (role: string, text: string): Promise<unknown[] | Error> => {
    const client = new pg.Client({ connectionString: as(role) });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } catch (err) {
      return err as Error;
    } finally {
      await client.end();
    }
  };

  /** The SQLSTATE of a refused statement (42501: insufficient privilege), or 'allowed'. */
  const outcome = (result: unknown[] | Error) => (result instanceof Error ? (result as Error & { code?: string }).code : 'allowed');

  beforeAll(async () => {
    iso = await isolate('roles');
    const admin = new pg.Client({ connectionString: iso.databaseUrl });
    await admin.connect();
    for (const roles of [gateway, webhooks]) for (const statement of schemaRoleStatements(roles)) await admin.query(statement);
    for (const statement of auditorStatements([gateway, webhooks], DEFAULT_CONNECTION_LIMITS, auditor)) await admin.query(statement);
    await admin.end();
    // Each owner migrates its own schema, as the migration Jobs do.
    for (const [roles, migrations] of [
      [gateway, gatewayMigrations],
      [webhooks, webhookIngestMigrations],
    ] as const) {
      const db = createDb<unknown>({ connectionString: as(roles.owner), max: 1 });
      await migrateSchema(db, roles.schema, migrations);
      await db.destroy();
    }
  });
  afterAll(async () => {
    await iso.drop();
    const admin = new pg.Client({ connectionString: iso.databaseUrl.replace(/\/[^/]*$/, '/postgres') });
    await admin.connect();
    for (const role of [gateway.runtime, gateway.owner, webhooks.runtime, webhooks.owner, auditor])
      await admin.query(`drop role if exists "${role}"`);
    await admin.end();
  });

  it('keeps the webhook-ingest runtime role out of gateway.api_keys, and the gateway’s out of webhook_ingest', async () => {
    expect(outcome(await query(webhooks.runtime, 'select * from gateway.api_keys'))).toBe('42501');
    expect(outcome(await query(webhooks.runtime, 'select * from gateway.empresas'))).toBe('42501');
    expect(outcome(await query(gateway.runtime, 'select * from webhook_ingest.integraciones'))).toBe('42501');
    expect(outcome(await query(gateway.runtime, 'select * from webhook_ingest.entregas'))).toBe('42501');
  });

  it('lets each runtime role read and write its own schema’s data, and change none of its structure', async () => {
    expect(await query(gateway.runtime, `insert into gateway.empresas (nombre) values ('Empresa Roles') returning nombre`)).toEqual([
      { nombre: 'Empresa Roles' },
    ]);
    expect(await query(webhooks.runtime, 'select count(*)::int as n from webhook_ingest.integraciones')).toEqual([{ n: 0 }]);
    expect(outcome(await query(webhooks.runtime, 'create table webhook_ingest.intrusa (id int)'))).toBe('42501');
    expect(outcome(await query(webhooks.runtime, 'create table public.intrusa (id int)'))).toBe('42501');
    expect(outcome(await query(gateway.runtime, 'drop table gateway.api_keys'))).toBe('42501');
    expect(await query(gateway.runtime, 'select count(*)::int as n from gateway.api_keys')).toEqual([{ n: 0 }]);
  });

  it('lets the auditor read every schema, tables made by later migrations included, and write nothing', async () => {
    expect(await query(auditor, 'select count(*)::int as n from gateway.api_keys')).toEqual([{ n: 0 }]);
    expect(await query(auditor, 'select count(*)::int as n from webhook_ingest.entregas')).toEqual([{ n: 0 }]);
    // A table a later release's migration adds is readable without running db:roles again.
    expect(await query(webhooks.owner, 'create table webhook_ingest.nueva (id serial primary key)')).toEqual([]);
    expect(await query(auditor, 'select count(*)::int as n from webhook_ingest.nueva')).toEqual([{ n: 0 }]);
    expect(await query(auditor, 'select last_value from webhook_ingest.nueva_id_seq')).toEqual([{ last_value: '1' }]);
    // Read-only by default, and without the privilege even when it asks for a writable transaction.
    expect(outcome(await query(auditor, `insert into gateway.empresas (nombre) values ('Intrusa')`))).toBe('25006');
    expect(outcome(await query(auditor, `begin read write; insert into gateway.empresas (nombre) values ('Intrusa')`))).toBe('42501');
    expect(outcome(await query(auditor, 'create table webhook_ingest.intrusa (id int)'))).toBe('25006');
  });

  it('holds each runtime role to its connection limit', async () => {
    const limit = DEFAULT_CONNECTION_LIMITS.runtime;
    expect(await query(webhooks.owner, `select rolconnlimit from pg_roles where rolname = '${webhooks.runtime}'`)).toEqual([
      { rolconnlimit: limit },
    ]);
    const clients = Array.from({ length: limit }, () => new pg.Client({ connectionString: as(webhooks.runtime) }));
    try {
      await Promise.all(clients.map((c) => c.connect()));
      const extra = new pg.Client({ connectionString: as(webhooks.runtime) });
      await expect(extra.connect()).rejects.toThrow(/too many connections for role/);
      await extra.end().catch(() => undefined);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
