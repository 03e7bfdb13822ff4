import { inventorySubjects, isAppError } from '@erp/contracts';
import Decimal from 'decimal.js';
import { sql } from 'kysely';
import { Random, tenant, type Harness } from '@erp/testing';
import { summarizeInventario } from '../src/db/producto-list.repository';
import type { InventoryDb } from '../src/db/tables';
import { seedCompany, startInventory } from './inventory.factories';
import { productsWithStaleDerivedValues, summarizeByDirectAggregate } from './summary-oracle';

const CATEGORIAS = ['Herramientas', 'Electricidad', 'Pintura', undefined];
/** Refusals the operations may meet on random input; anything else (a deadlock, a 500) fails the test. */
const EXPECTED_REFUSALS = new Set(['VALIDATION_FAILED', 'BUSINESS_RULE', 'NOT_FOUND', 'CONFLICT']);

describe('the inventory summary counters', () => {
  let h: Harness<InventoryDb>;
  let a: Awaited<ReturnType<typeof seedCompany>>;
  const productIds: Record<number, number[]> = { 1: [], 2: [] };

  const product = (empresa: number, i: number, rnd: Random) => ({
    ref: `e${empresa}-p${i}`,
    nombre: `Producto ${empresa}-${i}`,
    codigo: `E${empresa}-P${i}`,
    precio: '10.00',
    costo_promedio: `${rnd.int(0, 5000) / 100}`,
    categoria: rnd.pick(CATEGORIAS),
    enable: rnd.chance(0.85) ? 1 : 0,
    tipo: rnd.chance(0.1) ? 'Servicio' : 'Producto',
    inventarios: [
      { bodega: 'principal', stock: `${rnd.int(-2, 20)}.${rnd.int(0, 9)}`, stock_minimo: `${rnd.int(0, 5)}` },
      ...(rnd.chance(0.7) ? [{ bodega: 'reserva', stock: rnd.int(0, 8), stock_minimo: '2' }] : []),
      ...(rnd.chance(0.5) ? [{ bodega: 'vieja', stock: rnd.int(1, 9) }] : []),
    ],
  });

  beforeAll(async () => {
    h = await startInventory('summary');
    const rnd = new Random(11);
    a = await seedCompany(
      h.bus,
      1,
      Array.from({ length: 14 }, (_, i) => product(1, i, rnd)),
    );
    const b = await seedCompany(
      h.bus,
      2,
      Array.from({ length: 5 }, (_, i) => product(2, i, rnd)),
    );
    productIds[1] = Object.values(a.productos);
    productIds[2] = Object.values(b.productos);
  });
  afterAll(() => h?.close());

  // Exact decimals compared by value: "0" and "0.000" are the same stock.
  const byValue = ({ totals, categorias }: Awaited<ReturnType<typeof summarizeInventario>>) => ({
    totals: { ...totals, stock_total: new Decimal(totals.stock_total).toString(), valor_total: new Decimal(totals.valor_total).toString() },
    categorias,
  });

  async function expectCountersExact(when: string) {
    for (const empresa of [1, 2]) {
      const expected = byValue(await summarizeByDirectAggregate(h.db, empresa));
      expect({ when, empresa, summary: byValue(await summarizeInventario(h.db, empresa)) }).toEqual({ when, empresa, summary: expected });
    }
    expect({ when, stale: await productsWithStaleDerivedValues(h.db) }).toEqual({ when, stale: [] });
  }

  it('start equal to the direct aggregate after the seed', async () => {
    await expectCountersExact('seed');
  });

  // Transactions retry a deadlock, which would hide one: Postgres counts them per database.
  const deadlocks = async () =>
    Number(
      (await sql<{ n: string }>`select deadlocks as n from pg_stat_database where datname = current_database()`.execute(h.db)).rows[0]!.n,
    );

  it('stay equal to the direct aggregate through a random sequence of concurrent writes of every kind, without a deadlock', async () => {
    const deadlocksBefore = await deadlocks();
    const rnd = new Random(2024);
    const claves: string[] = [];
    let serial = 0;
    const bodegas = () => [a.bodegas.principal!, a.bodegas.reserva!, a.bodegas.vieja!];
    const someProducts = () => [...new Set(Array.from({ length: rnd.int(1, 3) }, () => rnd.pick(productIds[1]!)))];
    const quantity = () => `${rnd.int(1, 6)}${rnd.chance(0.3) ? '.5' : ''}`;

    const operations: Array<() => Promise<unknown>> = [
      () => {
        const clave = `venta:${++serial}`;
        claves.push(clave);
        const lineas = someProducts().map((id) => ({ id_producto: id, cantidad: quantity() }));
        return h.bus.request(
          inventorySubjects,
          'inventory.stock.reserve',
          { clave, id_bodega: rnd.chance(0.9) ? rnd.pick(bodegas().slice(0, 2)) : a.bodegas.vieja!, lineas },
          tenant(1, { venderSinStock: rnd.chance(0.5) }),
        );
      },
      () =>
        h.bus.request(inventorySubjects, 'inventory.stock.confirm', { clave: rnd.pick(claves.length > 0 ? claves : ['none']) }, tenant(1)),
      () =>
        h.bus.request(inventorySubjects, 'inventory.stock.release', { clave: rnd.pick(claves.length > 0 ? claves : ['none']) }, tenant(1)),
      () => {
        const lineas = someProducts().flatMap((id) =>
          [...new Set([rnd.pick(bodegas()), rnd.pick(bodegas())])].map((bodega) =>
            rnd.chance(0.5)
              ? { id_producto: id, id_bodega: bodega, cantidad: rnd.chance(0.5) ? quantity() : `-${quantity()}` }
              : { id_producto: id, id_bodega: bodega, stock: `${rnd.int(-1, 9)}` },
          ),
        );
        return h.bus.request(
          inventorySubjects,
          'inventory.stock.adjust',
          { clave: `ajuste:${++serial}`, origen: 'inventario', lineas },
          tenant(1, { venderSinStock: rnd.chance(0.5) }),
        );
      },
      async () => {
        const n = ++serial;
        const reply = await h.bus.request(
          inventorySubjects,
          'inventory.product.create',
          {
            nombre: `Nuevo ${n}`,
            codigo: `N-${n}`,
            precio: '3.00',
            costo_promedio: `${rnd.int(0, 900) / 100}`,
            categoria: rnd.pick([...CATEGORIAS, `Nueva ${n % 3}`]) ?? null,
          },
          tenant(1),
        );
        productIds[1]!.push(reply.id);
      },
      () => {
        const cambios = rnd.pick([
          { costo_promedio: `${rnd.int(0, 9000) / 100}` },
          { categoria: rnd.pick(CATEGORIAS) ?? null },
          { enable: rnd.pick([0, 1] as const) },
          { nombre: `Renombrado ${++serial}` },
        ]);
        return h.bus.request(inventorySubjects, 'inventory.product.update', { id: rnd.pick(productIds[1]!), cambios }, tenant(1));
      },
      () =>
        h.bus.request(
          inventorySubjects,
          'inventory.admin.bodega.set-active',
          { empresa_id: 1, id: rnd.pick(bodegas()), activo: rnd.chance(0.75) },
          { requestId: `b-${++serial}` },
        ),
      () =>
        h.bus.request(
          inventorySubjects,
          'inventory.admin.sucursal.set-active',
          { empresa_id: 1, id: rnd.pick([a.sucursales.centro!, a.sucursales.cerrada!]), activo: rnd.chance(0.75) },
          { requestId: `s-${++serial}` },
        ),
      // No subject soft-deletes or restores a product or changes a minimum: the back office does it in SQL.
      () =>
        h.db
          .updateTable('productos')
          .set({ deleted_at: sql`case when deleted_at is null then now() end` })
          .where('id', '=', rnd.pick(productIds[1]!))
          .execute(),
      () =>
        h.db
          .updateTable('inventarios')
          .set({ stock_minimo: `${rnd.int(0, 6)}` })
          .where('producto_id', '=', rnd.pick(productIds[1]!))
          .where('bodega_id', '=', rnd.pick(bodegas()))
          .execute(),
    ];

    for (let round = 0; round < 40; round++) {
      const batch = Array.from({ length: 6 }, () => rnd.pick(operations));
      const results = await Promise.allSettled(batch.map((op) => op()));
      for (const r of results) {
        if (r.status === 'rejected' && !(isAppError(r.reason) && EXPECTED_REFUSALS.has(r.reason.code))) throw r.reason;
      }
      await expectCountersExact(`round ${round}`);
    }
    // Backends publish their statistics at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await deadlocks()).toBe(deadlocksBefore);
  });

  it('stay exact when many sales and adjustments over the same products meet warehouse and branch changes, without a deadlock', async () => {
    const deadlocksBefore = await deadlocks();
    const rnd = new Random(99);
    const ids = productIds[1]!.slice(0, 6);
    const shuffled = () => [...ids].sort(() => rnd.next() - 0.5).slice(0, rnd.int(2, 5));
    const work: Array<Promise<unknown>> = [];
    for (let i = 0; i < 40; i++) {
      const lineas = shuffled();
      work.push(
        i % 2 === 0
          ? h.bus.request(
              inventorySubjects,
              'inventory.stock.reserve',
              { clave: `carrera:${i}`, id_bodega: a.bodegas.principal!, lineas: lineas.map((id) => ({ id_producto: id, cantidad: 1 })) },
              tenant(1),
            )
          : h.bus.request(
              inventorySubjects,
              'inventory.stock.adjust',
              {
                clave: `carrera:${i}`,
                origen: 'inventario',
                permitir_sin_stock: true,
                lineas: lineas.flatMap((id) => [
                  { id_producto: id, id_bodega: a.bodegas.reserva!, cantidad: 2 },
                  { id_producto: id, id_bodega: a.bodegas.principal!, cantidad: -1 },
                ]),
              },
              tenant(1),
            ),
      );
      if (i % 8 === 0) {
        const activo = i % 16 === 0;
        work.push(
          h.bus.request(
            inventorySubjects,
            'inventory.admin.bodega.set-active',
            { empresa_id: 1, id: a.bodegas.reserva!, activo },
            { requestId: `c-b-${i}` },
          ),
        );
        work.push(
          h.bus.request(
            inventorySubjects,
            'inventory.admin.sucursal.set-active',
            { empresa_id: 1, id: a.sucursales.centro!, activo: !activo },
            { requestId: `c-s-${i}` },
          ),
        );
      }
    }
    const results = await Promise.allSettled(work);
    for (const r of results) {
      if (r.status === 'rejected' && !(isAppError(r.reason) && EXPECTED_REFUSALS.has(r.reason.code))) throw r.reason;
    }
    await h.bus.request(
      inventorySubjects,
      'inventory.admin.sucursal.set-active',
      { empresa_id: 1, id: a.sucursales.centro!, activo: true },
      { requestId: 'c-s-end' },
    );
    await expectCountersExact('after the race');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await deadlocks()).toBe(deadlocksBefore);
  });

  it('keep each company to its own products', async () => {
    const before = await summarizeInventario(h.db, 2);
    await h.bus.request(inventorySubjects, 'inventory.product.create', { nombre: 'Solo uno', codigo: 'SOLO-1', precio: '1' }, tenant(1));
    expect(await summarizeInventario(h.db, 2)).toEqual(before);
    await expectCountersExact('after another company wrote');
  });
});
