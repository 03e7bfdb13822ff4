import { Decimal, inventorySubjects, isAppError } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import { sql } from 'kysely';
import { summarizeInventario } from '../src/db/producto-list.repository';
import type { InventoryDb } from '../src/db/tables';
import { movementsOf, product, seedCompany, startInventory, stockOf } from './inventory.factories';
import { productsWithStaleDerivedValues, summarizeByDirectAggregate } from './summary-oracle';

const PRODUCTS = [
  // Low at 1: the counters see it go low and then out of stock within one request.
  product('last', 3, { inventarios: [{ bodega: 'principal', stock: 3, stock_minimo: '1' }] }),
  product('other', 5, { inventarios: [{ bodega: 'principal', stock: 5, stock_minimo: '4' }] }),
  product('svc', null, { tipo: 'Servicio' }),
  product('new', null),
];

describe('inventory.stock.reserve-many', () => {
  let h: Harness<InventoryDb>;
  let many: Awaited<ReturnType<typeof seedCompany>>;
  let one: Awaited<ReturnType<typeof seedCompany>>;

  beforeAll(async () => {
    h = await startInventory('reserve-many');
    many = await seedCompany(h.bus, 1, PRODUCTS);
    one = await seedCompany(h.bus, 2, PRODUCTS);
  });
  afterAll(() => h?.close());

  /**
   * The same reservations for either company: competing for the last units, short, unknown, a
   * service, a repeated key, one allowed below zero, one in another warehouse between two in the first.
   */
  const reservas = (r: typeof many, tag: string) => {
    const p = r.productos as Record<string, number>;
    const bodega = r.bodegas.principal!;
    const list = [
      {
        clave: `${tag}-1`,
        id_bodega: bodega,
        lineas: [
          { id_producto: p.last!, cantidad: '2' },
          { id_producto: p.other!, cantidad: '1' },
        ],
      },
      {
        clave: `${tag}-2`,
        id_bodega: bodega,
        lineas: [
          { id_producto: p.other!, cantidad: '1' },
          { id_producto: p.last!, cantidad: '2' },
        ],
      },
      {
        clave: `${tag}-3`,
        id_bodega: bodega,
        lineas: [
          { id_producto: p.last!, cantidad: '1' },
          { id_producto: p.svc!, cantidad: '4' },
        ],
      },
      { clave: `${tag}-4`, id_bodega: bodega, lineas: [{ id_producto: 999_999, cantidad: '1' }] },
      { clave: `${tag}-5`, id_bodega: 999_999, lineas: [{ id_producto: p.other!, cantidad: '1' }] },
      {
        clave: `${tag}-1`,
        id_bodega: bodega,
        lineas: [
          { id_producto: p.last!, cantidad: '2' },
          { id_producto: p.other!, cantidad: '1' },
        ],
      },
      { clave: `${tag}-6`, id_bodega: bodega, permitir_sin_stock: true, lineas: [{ id_producto: p.new!, cantidad: '2' }] },
      { clave: `${tag}-7`, id_bodega: bodega, lineas: [{ id_producto: p.new!, cantidad: '1' }] },
      {
        clave: `${tag}-8`,
        id_bodega: r.bodegas.reserva!,
        permitir_sin_stock: true,
        lineas: [
          { id_producto: p.other!, cantidad: '1.5' },
          { id_producto: p.last!, cantidad: '0.25' },
        ],
      },
      { clave: `${tag}-9`, id_bodega: bodega, lineas: [{ id_producto: p.other!, cantidad: '1.25' }] },
    ];
    // Each names its sale, so the events' causes can be told apart.
    return list.map((req) => ({ ...req, causa: { id_venta: Number(req.clave.split('-')[1]) } }));
  };

  /** Stock, ledger, product counters and `stock.changed` events of a company, with products, warehouses and keys named by reference. */
  const stateOf = async (r: typeof many, empresaId: number) => {
    const productoRef = new Map(Object.entries(r.productos as Record<string, number>).map(([ref, id]) => [id, ref]));
    const bodegaRef = new Map(Object.entries(r.bodegas as Record<string, number>).map(([ref, id]) => [id, ref]));
    const state: Record<string, unknown> = {};
    for (const ref of ['last', 'other', 'svc', 'new']) {
      const id = (r.productos as Record<string, number>)[ref]!;
      const producto = await h.db
        .selectFrom('productos')
        .select(['stock_activo', 'bodegas_con_stock', 'bodegas_stock_bajo'])
        // Stamped by the last change of any of its entries (see migration 0007).
        .select(
          sql<boolean>`cambio_xid = (select max(i.cambio_xid) from inventory.inventarios i where i.producto_id = productos.id)`.as(
            'stamped',
          ),
        )
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      state[ref] = {
        stock: { principal: await stockOf(h, id, r.bodegas.principal!), reserva: await stockOf(h, id, r.bodegas.reserva!) },
        producto,
        movimientos: (await movementsOf(h.db, id)).map((m) => [
          bodegaRef.get(m.bodega_id),
          m.tipo,
          m.cantidad,
          m.stock_resultante,
          m.clave?.replace(/^\w+-/, ''),
        ]),
      };
    }
    const events = await h.db
      .selectFrom('outbox')
      .select(['subject', 'payload'])
      .where(sql<boolean>`payload->>'empresa_id' = ${String(empresaId)}`)
      .where(sql<boolean>`payload->'causa' ? 'id_venta'`)
      .orderBy('created_at')
      .execute();
    state.events = events.map(({ subject, payload }) => {
      const p = payload as { causa: unknown; movimientos: Array<Record<string, unknown>> };
      return {
        subject,
        causa: p.causa,
        movimientos: p.movimientos.map((m) => ({
          ...m,
          id_producto: productoRef.get(m.id_producto as number),
          id_bodega: bodegaRef.get(m.id_bodega as number),
          referencia: (m.referencia as string).replace(/^\w+-/, ''),
        })),
      };
    });
    return state;
  };

  it('decides each reservation in order, all or nothing, exactly as the same reservations sent one by one', async () => {
    const sut = await h.bus.request(
      inventorySubjects,
      'inventory.stock.reserve-many',
      { reservas: reservas(many, 'many') },
      tenant(1, { venderSinStock: false }),
    );
    const alone = [];
    for (const req of reservas(one, 'one')) {
      alone.push(
        await h.bus.request(inventorySubjects, 'inventory.stock.reserve', req, tenant(2, { venderSinStock: false })).then(
          (reserva) => ({ reserva }),
          (err: unknown) => ({
            error: isAppError(err) ? { code: err.code, reason: err.reason, message: err.message, details: err.details } : err,
          }),
        ),
      );
    }
    // Product ids differ between the two companies: lines name the product's reference instead.
    const shapeOf = (r: typeof many) => {
      const refOf = new Map(Object.entries(r.productos as Record<string, number>).map(([ref, id]) => [id, ref]));
      return (x: { reserva?: { estado: string; aplicado: boolean; lineas: Array<{ id_producto: number }> }; error?: unknown }) =>
        x.reserva
          ? {
              estado: x.reserva.estado,
              aplicado: x.reserva.aplicado,
              lineas: x.reserva.lineas.map((l) => ({ ...l, id_producto: refOf.get(l.id_producto) })),
            }
          : { error: x.error };
    };
    expect(sut.resultados.map(shapeOf(many))).toEqual(alone.map((r) => shapeOf(one)(r as never)));
    expect(sut.resultados.map((r) => r.error?.code ?? (r.reserva!.aplicado ? 'taken' : 'replayed'))).toEqual([
      'taken',
      'BUSINESS_RULE',
      'taken',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'replayed',
      'taken',
      'BUSINESS_RULE',
      'taken',
      'taken',
    ]);
    // The short one took nothing, not even its line that had stock.
    expect(sut.resultados[1]!.error!.details).toEqual({
      'lineas.1.cantidad': ['Stock insuficiente para el producto LAST: disponible 1, solicitado 2'],
    });
    const sutState = await stateOf(many, 1);
    expect(sutState).toEqual(await stateOf(one, 2));
    expect(sutState.other).toMatchObject({ stock: { principal: '2.750', reserva: '-1.500' } });
    // One event per reservation that took stock, in order.
    expect((sutState.events as Array<{ causa: unknown }>).map((e) => e.causa)).toEqual([1, 3, 6, 8, 9].map((id_venta) => ({ id_venta })));
    // The counters a statement moved by several reservations at once still equal the rows.
    expect(await productsWithStaleDerivedValues(h.db)).toEqual([]);
    const byValue = ({ totals, categorias }: Awaited<ReturnType<typeof summarizeInventario>>) => ({
      totals: {
        ...totals,
        stock_total: new Decimal(totals.stock_total).toString(),
        valor_total: new Decimal(totals.valor_total).toString(),
      },
      categorias,
    });
    expect(byValue(await summarizeInventario(h.db, 1))).toEqual(byValue(await summarizeByDirectAggregate(h.db, 1)));
  });
});
