import { isAppError, salesPlatformSubjects } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import type { SalesDb } from '../src/db/tables';
import { platformHandlers } from '../src/handlers/platform.handlers';
import { salesHarness } from './sales.factories';

const ctxOf = (empresa: number) => tenant(empresa, { usuario: { id: 1, nombre: 'Ana' } });

describe('sales subjects of e-commerce integrations', () => {
  let h: Harness<SalesDb>;

  beforeAll(async () => {
    h = await salesHarness('salesplat');
    h.bus.serve(salesPlatformSubjects, platformHandlers(h.db, h.bus), { queue: 'sales' });
  });
  afterAll(() => h?.close());

  const findOrCreate = (empresa: number, email: string, nombre: string | null = 'Marta Ruiz') =>
    h.bus.request(salesPlatformSubjects, 'sales.customer.find-or-create', { email, nombre }, ctxOf(empresa));

  it('creates one customer per company and email even when ten orders of a new customer arrive at once', async () => {
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => findOrCreate(1, i % 2 ? 'Marta.Ruiz@Example.com' : ' marta.ruiz@example.com')),
    );
    expect(new Set(replies.map((r) => r.id)).size).toBe(1);
    expect(replies.filter((r) => r.creado)).toHaveLength(1);
    const rows = await h.db.selectFrom('clientes').select(['empresa_id', 'nombre', 'email']).execute();
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
    expect(await h.bus.request(salesPlatformSubjects, 'sales.sale.by-reference', { referencia_externa: 'woo-1' }, ctxOf(1))).toBeNull();
  });
});
