import { sql, type Kysely } from 'kysely';
import { createDb, migrateSchema, type Migrations } from '@erp/db';
import { EXPORTS_SCHEMA, exportsMigrations } from '@erp/exports';
import { GATEWAY_SCHEMA, gatewayMigrations } from '@erp/gateway';
import { INVENTORY_SCHEMA, inventoryMigrations } from '@erp/inventory';
import { PACKAGES_SCHEMA, packagesMigrations } from '@erp/packages';
import { RETURNS_SCHEMA, returnsMigrations } from '@erp/returns';
import { SALES_SCHEMA, salesMigrations } from '@erp/sales';
import { SUBSCRIPTIONS_SCHEMA, subscriptionsMigrations } from '@erp/subscriptions';
import { WEBHOOK_INGEST_SCHEMA, webhookIngestMigrations } from '@erp/webhook-ingest';
import { isolate, type Isolation } from '@erp/testing';

const SERVICES: Array<[string, Migrations]> = [
  [GATEWAY_SCHEMA, gatewayMigrations],
  [SALES_SCHEMA, salesMigrations],
  [INVENTORY_SCHEMA, inventoryMigrations],
  [RETURNS_SCHEMA, returnsMigrations],
  [PACKAGES_SCHEMA, packagesMigrations],
  [WEBHOOK_INGEST_SCHEMA, webhookIngestMigrations],
  [SUBSCRIPTIONS_SCHEMA, subscriptionsMigrations],
  [EXPORTS_SCHEMA, exportsMigrations],
];

/** A column as the previous release's code sees it. */
interface Column {
  notNull: boolean;
  /** A default, an identity or a generated value: an insert that leaves the column out still works. */
  filled: boolean;
}
type Shape = Map<string, Map<string, Column>>;

async function shapeOf(db: Kysely<unknown>, schema: string): Promise<Shape> {
  const { rows } = await sql<{ table: string; column: string | null; not_null: boolean | null; filled: boolean | null }>`
    select c.relname as table, a.attname as column, a.attnotnull as not_null,
           (a.atthasdef or a.attidentity <> '' or a.attgenerated <> '') as filled
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
     where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm')`.execute(db);
  const shape: Shape = new Map();
  for (const row of rows) {
    const columns = shape.get(row.table) ?? new Map<string, Column>();
    if (row.column) columns.set(row.column, { notNull: Boolean(row.not_null), filled: Boolean(row.filled) });
    shape.set(row.table, columns);
  }
  return shape;
}

/** What a migration did that the code of the release before it may not survive (the rolling update, a rollback). */
function contractions(before: Shape, after: Shape): string[] {
  const found: string[] = [];
  for (const [table, columns] of before) {
    const now = after.get(table);
    if (!now) {
      found.push(`drops or renames table ${table}`);
      continue;
    }
    for (const [name, column] of columns) {
      const later = now.get(name);
      if (!later) found.push(`drops or renames column ${table}.${name}`);
      else if (later.notNull && !column.notNull && !later.filled) found.push(`makes ${table}.${name} NOT NULL without a default`);
    }
    for (const [name, column] of now) {
      if (!columns.has(name) && column.notNull && !column.filled) found.push(`adds NOT NULL column ${table}.${name} without a default`);
    }
  }
  return found;
}

/**
 * The migrations of `schema` one at a time, with what each changed that the previous release relies
 * on, unless the migration says it is the contract step of an earlier expand: `export const
 * contractOf = '<that migration>'` (the code stopped using what it removes a release ago).
 */
async function checkMigrations(db: Kysely<unknown>, schema: string, migrations: Migrations): Promise<string[]> {
  const names = Object.keys(migrations).sort();
  const problems: string[] = [];
  let before = await shapeOf(db, schema);
  for (const [i, name] of names.entries()) {
    await migrateSchema(db, schema, Object.fromEntries(names.slice(0, i + 1).map((n) => [n, migrations[n]!])));
    const after = await shapeOf(db, schema);
    const contractOf = (migrations[name] as { contractOf?: unknown }).contractOf;
    if (contractOf !== undefined) {
      if (typeof contractOf !== 'string' || !names.slice(0, i).includes(contractOf))
        problems.push(`${schema}/${name}: contractOf names no earlier migration of ${schema} (${String(contractOf)})`);
    } else {
      problems.push(...contractions(before, after).map((what) => `${schema}/${name} ${what}`));
    }
    before = after;
  }
  return problems;
}

describe('every migration is expand-only, or marked as the contract step of an earlier expand', () => {
  let iso: Isolation;
  let db: Kysely<unknown>;
  beforeAll(async () => {
    iso = await isolate('expand');
    db = createDb<unknown>({ connectionString: iso.databaseUrl, max: 1 });
  });
  afterAll(async () => {
    await db?.destroy();
    await iso?.drop();
  });

  it.each(SERVICES)('%s', async (schema, migrations) => {
    expect(await checkMigrations(db, schema, migrations)).toEqual([]);
  });

  it('finds a dropped, renamed or tightened column, a dropped table and a NOT NULL column without a default, and lets a marked contract step through', async () => {
    const exec = (text: string) => async (trx: Kysely<unknown>) => void (await sql.raw(text).execute(trx));
    const sut: Migrations = {
      '0001-expand': {
        up: exec(`create table cosas (id serial primary key, nombre text, viejo text, nota text not null default '', tmp int);
                  create table temporal (id int)`),
      },
      '0002-drop-column': { up: exec('alter table cosas drop column viejo') },
      '0003-rename-column': { up: exec('alter table cosas rename column tmp to cantidad') },
      '0004-not-null': { up: exec('alter table cosas add column codigo text not null') },
      '0005-with-default': { up: exec(`alter table cosas add column estado text not null default 'activo', add column extra text`) },
      '0006-tighten': { up: exec(`update cosas set nombre = ''; alter table cosas alter column nombre set not null`) },
      '0007-drop-table': { up: exec('drop table temporal') },
      '0008-contract': Object.assign({ up: exec('alter table cosas drop column nota') }, { contractOf: '0001-expand' }),
      '0009-bad-marker': Object.assign({ up: exec('alter table cosas drop column extra') }, { contractOf: '0010-later' }),
    };
    expect(await checkMigrations(db, 'expand_contract_sample', sut)).toEqual([
      'expand_contract_sample/0002-drop-column drops or renames column cosas.viejo',
      'expand_contract_sample/0003-rename-column drops or renames column cosas.tmp',
      'expand_contract_sample/0004-not-null adds NOT NULL column cosas.codigo without a default',
      'expand_contract_sample/0006-tighten makes cosas.nombre NOT NULL without a default',
      'expand_contract_sample/0007-drop-table drops or renames table temporal',
      'expand_contract_sample/0009-bad-marker: contractOf names no earlier migration of expand_contract_sample (0010-later)',
    ]);
  });
});
