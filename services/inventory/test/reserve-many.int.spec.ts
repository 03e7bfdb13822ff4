import { inventorySubjects, isAppError } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import type { InventoryDb } from '../src/db/tables';
import { movementsOf, seedCompany, startInventory, stockOf } from './inventory.factories';

const product = (ref: string, stock: number | null, over: Record<string, unknown> = {}) => ({
  ref,
  nombre: `Producto ${ref}`,
  codigo: ref.toUpperCase(),
  precio: '10.50',
  costo_promedio: '4.25',
  inventarios: stock === null ? [] : [{ bodega: 'principal', stock }],
  ...over,
});

const PRODUCTS = [product('last', 3), product('other', 5), product('svc', null, { tipo: 'Servicio' }), product('new', null)];

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

  /** The same reservations for either company: competing for the last units, short, unknown, a service, a repeated key, one allowed below zero. */
  const reservas = (r: typeof many, tag: string) => {
    const p = r.productos as Record<string, number>;
    const bodega = r.bodegas.principal!;
    return [
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
    ];
  };

  const stateOf = async (r: typeof many) => {
    const bodega = r.bodegas.principal!;
    const state: Record<string, unknown> = {};
    for (const ref of ['last', 'other', 'svc', 'new']) {
      const id = (r.productos as Record<string, number>)[ref]!;
      state[ref] = {
        stock: await stockOf(h, id, bodega).catch(() => 'none'),
        movimientos: (await movementsOf(h.db, id)).map((m) => [m.tipo, m.cantidad, m.stock_resultante, m.clave?.replace(/^\w+-/, '')]),
      };
    }
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
    ]);
    // The short one took nothing, not even its line that had stock.
    expect(sut.resultados[1]!.error!.details).toEqual({
      'lineas.1.cantidad': ['Stock insuficiente para el producto LAST: disponible 1, solicitado 2'],
    });
    expect(await stateOf(many)).toEqual(await stateOf(one));
    expect((await stateOf(many)).other).toMatchObject({ stock: '4.000' });
  });
});
