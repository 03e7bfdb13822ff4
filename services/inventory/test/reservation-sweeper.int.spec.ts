import { inventorySubjects, salesSubjects } from '@erp/contracts';
import { eventually, tenant, type Harness } from '@erp/testing';
import type { InventoryDb } from '../src/db/tables';
import { movementsOf, seedCompany, startInventory, stockOf } from './inventory.factories';

describe('the reservation sweeper', () => {
  let h: Harness<InventoryDb>;
  let refs: Awaited<ReturnType<typeof seedCompany>>;

  beforeAll(async () => {
    h = await startInventory('sweeper', {
      RESERVATION_TIMEOUT_MS: '300',
      RESERVATION_SWEEP_INTERVAL_MS: '100',
      RESERVATION_CHECK_TIMEOUT_MS: '300',
    });
    refs = await seedCompany(h.bus, 1, [
      { ref: 'p', nombre: 'Producto', codigo: 'P-1', precio: '1', inventarios: [{ bodega: 'principal', stock: 10 }] },
    ]);
  });
  afterAll(() => h?.close());

  const estadoOf = async (clave: string) =>
    await h.db.selectFrom('reservas').select(['estado', 'revisiones']).where('clave', '=', clave).executeTakeFirstOrThrow();

  it('waits while the origin cannot answer, then releases the orphan and confirms the one whose sale exists', async () => {
    const id = refs.productos.p!;
    const bodega = refs.bodegas.principal!;
    for (const clave of ['orphan', 'sold']) {
      await h.bus.request(
        inventorySubjects,
        'inventory.stock.reserve',
        { clave, id_bodega: bodega, lineas: [{ id_producto: id, cantidad: 2 }] },
        tenant(1, { venderSinStock: false }),
      );
    }
    expect(await stockOf(h, id, bodega)).toBe('6.000');

    // Nobody serves sales.sale.exists yet: the overdue reservations are checked, and kept.
    await eventually(async () => expect((await estadoOf('orphan')).revisiones).toBeGreaterThan(0));
    expect(await estadoOf('orphan')).toMatchObject({ estado: 'reservada' });
    expect(await estadoOf('sold')).toMatchObject({ estado: 'reservada' });

    const asked: string[] = [];
    h.bus.serve(
      salesSubjects,
      {
        'sales.sale.exists': async ({ empresa_id, clave }) => {
          asked.push(`${empresa_id}:${clave}`);
          return { exists: clave === 'sold' };
        },
      },
      { queue: 'sales' },
    );

    await eventually(async () => {
      expect((await estadoOf('orphan')).estado).toBe('liberada');
      expect((await estadoOf('sold')).estado).toBe('confirmada');
    }, 10_000);
    expect(asked).toEqual(expect.arrayContaining(['1:orphan', '1:sold']));
    expect(await stockOf(h, id, bodega)).toBe('8.000');
    expect((await movementsOf(h.db, id)).map((m) => [m.tipo, m.clave])).toEqual([
      ['inventario_inicial', null],
      ['reserva', 'orphan'],
      ['reserva', 'sold'],
      ['liberacion', 'orphan'],
    ]);
  });
});
