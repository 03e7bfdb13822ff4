import { Kysely, PostgresDialect } from 'kysely';
import { Bus } from '@erp/bus';
import { isAppError, salesPlatformSubjects, type TenantContext } from '@erp/contracts';
import { createPool, migrateSchema } from '@erp/db';
import { createLogger } from '@erp/runtime';
import { isolate, type Isolation } from '@erp/testing';
import { migrations } from '../src/db/migrations';
import type { SalesDb } from '../src/db/tables';
import { platformHandlers } from '../src/handlers/platform.handlers';
import { SALES_SCHEMA } from '../src/db/tables';

const ctxOf = (empresa: number): TenantContext => ({
  requestId: 'platform-int',
  empresa: { id: empresa, nombre: `Empresa ${empresa}`, iva: '13', venderSinStock: true },
  usuario: { id: 1, nombre: 'Ana' },
});

describe('sales subjects of e-commerce integrations', () => {
  let iso: Isolation;
  let rootDb: Kysely<unknown>;
  let db: Kysely<SalesDb>;
  let bus: Bus;

  beforeAll(async () => {
    iso = await isolate('salesplat');
    rootDb = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: createPool({ connectionString: iso.databaseUrl, max: 10 }) }) });
    await migrateSchema(rootDb, SALES_SCHEMA, migrations);
    db = rootDb.withSchema(SALES_SCHEMA) as unknown as Kysely<SalesDb>;
    bus = await Bus.connect({
      servers: iso.natsUrl,
      prefix: iso.subjectPrefix,
      name: 'sales-platform-int',
      logger: createLogger('t', 'silent'),
    });
    bus.serve(salesPlatformSubjects, platformHandlers(db, bus), { queue: 'sales' });
  });
  afterAll(async () => {
    await bus.drain();
    await rootDb.destroy();
    await iso.drop();
  });

  const findOrCreate = (empresa: number, email: string, nombre: string | null = 'Marta Ruiz') =>
    bus.request(salesPlatformSubjects, 'sales.customer.find-or-create', { email, nombre }, ctxOf(empresa));

  it('creates one customer per company and email even when ten orders of a new customer arrive at once', async () => {
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => findOrCreate(1, i % 2 ? 'Marta.Ruiz@Example.com' : ' marta.ruiz@example.com')),
    );
    expect(new Set(replies.map((r) => r.id)).size).toBe(1);
    expect(replies.filter((r) => r.creado)).toHaveLength(1);
    const rows = await db.selectFrom('clientes').select(['empresa_id', 'nombre', 'email']).execute();
    expect(rows).toEqual([{ empresa_id: 1, nombre: 'Marta Ruiz', email: 'marta.ruiz@example.com' }]);
  });

  it('never finds another company’s customer', async () => {
    const mine = await findOrCreate(1, 'marta.ruiz@example.com');
    const theirs = await findOrCreate(2, 'marta.ruiz@example.com');
    expect(theirs.creado).toBe(true);
    expect(theirs.id).not.toBe(mine.id);
  });

  it('refuses an address that is not an email, and finds no sale for an unknown reference', async () => {
    const err = await findOrCreate(1, 'not-an-email').catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('VALIDATION_FAILED');
    expect(await bus.request(salesPlatformSubjects, 'sales.sale.by-reference', { referencia_externa: 'woo-1' }, ctxOf(1))).toBeNull();
  });
});
