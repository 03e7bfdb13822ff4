import { inventorySubjects } from '@erp/contracts';
import Decimal from 'decimal.js';
import { sql } from 'kysely';
import { markLugarActive } from '../src/db/lugar.repository';
import { summarizeInventario } from '../src/db/producto-list.repository';
import { finishConteosPendientes } from '../src/flows/set-lugar-active.flow';
import { eventually, tenant, type Harness } from '@erp/testing';
import type { InventoryDb } from '../src/db/tables';
import { seedCompany, startInventory } from './inventory.factories';
import { productsWithStaleDerivedValues, summarizeByDirectAggregate } from './summary-oracle';

const PRODUCTS = 120;
const BATCH = 10;

describe('(de)activating a warehouse', () => {
  let h: Harness<InventoryDb>;
  let a: Awaited<ReturnType<typeof seedCompany>>;

  beforeAll(async () => {
    h = await startInventory('activation', { LOCATION_COUNT_BATCH: String(BATCH) });
    a = await seedCompany(
      h.bus,
      1,
      Array.from({ length: PRODUCTS }, (_, i) => ({
        ref: `p${i}`,
        nombre: `Producto ${i}`,
        codigo: `P-${i}`,
        precio: '2.00',
        costo_promedio: '1.00',
        inventarios: [
          { bodega: 'principal', stock: '3' },
          { bodega: 'reserva', stock: '1' },
        ],
      })),
    );
  });
  afterAll(() => h?.close());

  // Exact decimals compared by value: "0" and "0.000" are the same stock.
  const byValue = ({ totals, categorias }: Awaited<ReturnType<typeof summarizeInventario>>) => ({
    totals: { ...totals, stock_total: new Decimal(totals.stock_total).toString(), valor_total: new Decimal(totals.valor_total).toString() },
    categorias,
  });
  const expectSummaryExact = async () => {
    expect(await productsWithStaleDerivedValues(h.db)).toEqual([]);
    expect(byValue(await summarizeInventario(h.db, 1))).toEqual(byValue(await summarizeByDirectAggregate(h.db, 1)));
  };

  const stockActivo = async (productoId: number) =>
    (await h.db.selectFrom('productos').select('stock_activo').where('id', '=', productoId).executeTakeFirstOrThrow()).stock_activo;

  it('locks each product only for its own batch, and leaves the summary exact once it answers', async () => {
    const entries = await h.db
      .selectFrom('inventarios')
      .select(['id', 'producto_id'])
      .where('bodega_id', '=', a.bodegas.reserva!)
      .orderBy('id')
      .execute();
    const first = entries[0]!.producto_id;
    const last = entries[entries.length - 1]!.producto_id;

    // Another transaction holds the product of the last batch: the deactivation must wait there.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = h.db.transaction().execute(async (trx) => {
      await trx.selectFrom('productos').select('id').where('id', '=', last).forUpdate().execute();
      holding();
      await released;
    });
    await held;

    let answered = false;
    const deactivation = h.bus
      .request(
        inventorySubjects,
        'inventory.admin.bodega.set-active',
        { empresa_id: 1, id: a.bodegas.reserva!, activo: false },
        { requestId: 'deactivate-reserva' },
      )
      .finally(() => (answered = true));

    // The first batches commit while the last one waits: their products are moved out and free.
    await eventually(async () => expect(await stockActivo(first)).toBe('3.000'));
    const free = await h.db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = '200ms'`.execute(trx);
      return trx.selectFrom('productos').select('id').where('id', '=', first).forUpdate().execute();
    });
    expect(free).toEqual([{ id: first }]);
    await h.bus.request(
      inventorySubjects,
      'inventory.stock.adjust',
      { clave: 'durante', origen: 'inventario', lineas: [{ id_producto: first, id_bodega: a.bodegas.reserva!, cantidad: 4 }] },
      tenant(1),
    );
    expect(answered).toBe(false);
    expect(await stockActivo(last)).toBe('4.000');

    release();
    await holder;
    await expect(deactivation).resolves.toEqual({ id: a.bodegas.reserva!, activo: false });

    expect(await stockActivo(first)).toBe('3.000');
    expect(await stockActivo(last)).toBe('3.000');
    await expectSummaryExact();
    const summary = await summarizeInventario(h.db, 1);
    expect(Number(summary.totals.stock_total)).toBe(3 * PRODUCTS);
  });

  it('counts the warehouse again once it is reactivated, with the stock it gained while inactive', async () => {
    await h.bus.request(
      inventorySubjects,
      'inventory.admin.bodega.set-active',
      { empresa_id: 1, id: a.bodegas.reserva!, activo: true },
      { requestId: 'activate-reserva' },
    );
    await expectSummaryExact();
    const summary = await summarizeInventario(h.db, 1);
    expect(Number(summary.totals.stock_total)).toBe(4 * PRODUCTS + 4);
  });

  it('finishes a change whose count was cut short, as the next start does', async () => {
    // The process stopped right after the change of the place committed: no entry was moved yet.
    await markLugarActive(h.db, 'bodegas', 1, a.bodegas.reserva!, false);
    expect((await productsWithStaleDerivedValues(h.db)).length).toBe(PRODUCTS);

    expect(await finishConteosPendientes(h.db, BATCH)).toBe(1);
    await expectSummaryExact();
    expect(await finishConteosPendientes(h.db, BATCH)).toBe(0);
    await h.bus.request(
      inventorySubjects,
      'inventory.admin.bodega.set-active',
      { empresa_id: 1, id: a.bodegas.reserva!, activo: true },
      { requestId: 'reopen-reserva' },
    );
    await expectSummaryExact();
  });

  it('moves a branch of several warehouses out and back in batches, ending exact', async () => {
    await h.bus.request(
      inventorySubjects,
      'inventory.admin.sucursal.set-active',
      { empresa_id: 1, id: a.sucursales.centro!, activo: false },
      { requestId: 'close-centro' },
    );
    await expectSummaryExact();
    expect(Number((await summarizeInventario(h.db, 1)).totals.stock_total)).toBe(0);
    await h.bus.request(
      inventorySubjects,
      'inventory.admin.sucursal.set-active',
      { empresa_id: 1, id: a.sucursales.centro!, activo: true },
      { requestId: 'open-centro' },
    );
    await expectSummaryExact();
  });
});
