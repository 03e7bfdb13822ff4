import { Kysely, PostgresDialect } from 'kysely';
import { InventoryListRequest, inventorySubjects } from '@erp/contracts';
import { createPool } from '@erp/db';
import { INVENTORY_SCHEMA } from '../src';
import { listProducts } from '../src/db/product.repository';
import type { InventoryDb } from '../src/db/tables';
import { seedCompany, startInventory, tenant, type InventoryHarness } from './harness';

describe('inventory.product.list', () => {
  let h: InventoryHarness;
  let statements: string[];
  let counted: Kysely<InventoryDb>;

  beforeAll(async () => {
    h = await startInventory('list');
    const productos = Array.from({ length: 30 }, (_, i) => ({
      ref: `p${i}`,
      nombre: `Producto ${String(i).padStart(2, '0')}`,
      codigo: `P-${i}`,
      precio: '1',
      inventarios: [
        { bodega: 'principal', stock: i },
        { bodega: 'reserva', stock: 0 },
        { bodega: 'vieja', stock: 5 },
      ],
    }));
    await seedCompany(h.bus, 1, productos);
    statements = [];
    counted = new Kysely<InventoryDb>({
      dialect: new PostgresDialect({ pool: createPool({ connectionString: h.iso.databaseUrl, max: 2 }) }),
      log: (event) => void statements.push(event.query.sql),
    }).withSchema(INVENTORY_SCHEMA);
  });
  afterAll(async () => {
    await counted?.destroy();
    await h?.stop();
  });

  it('fetches a page and the stock of all its products in two statements, whatever the page size', async () => {
    for (const perPage of [1, 30]) {
      statements.length = 0;
      const { rows, total } = await listProducts(counted, 1, InventoryListRequest.parse({ per_page: perPage, con_stock: true, nombre: 'producto' }));
      expect(total).toBe(29);
      expect(rows).toHaveLength(Math.min(perPage, 29));
      expect(rows.every((r) => r.inventarios.length === 2)).toBe(true);
      expect(statements).toHaveLength(2);
    }
  });

  it('answers the page with the normalised filters over the bus', async () => {
    const page = await h.bus.request(inventorySubjects, 'inventory.product.list', { per_page: 5, page: 2, order_by: 'codigo', enable: 1 }, tenant(1, true));
    expect(page.items.map((p) => p.codigo)).toEqual(['P-13', 'P-14', 'P-15', 'P-16', 'P-17']);
    expect(page.pagination).toMatchObject({ current_page: 2, total: 30, total_pages: 6, from: 6, to: 10 });
    expect(page.filters_applied).toEqual({ enable: 1 });
    const other = await h.bus.request(inventorySubjects, 'inventory.product.list', {}, tenant(2, true));
    expect(other.pagination.total).toBe(0);
  });
});
