import { randomUUID } from 'node:crypto';
import { publishEvent } from '@erp/bus';
import { inventorySubjects, isAppError, type AppError } from '@erp/contracts';
import { sql } from 'kysely';
import { eventually, tenant, type Harness } from '@erp/testing';
import type { InventoryDb } from '../src/db/tables';
import { movementsOf, product, seedCompany, startInventory, stockOf } from './inventory.factories';

async function rejection(work: Promise<unknown>): Promise<AppError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAppError(err)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

describe('the stock ledger over the bus (reserve, confirm, release, adjust)', () => {
  let h: Harness<InventoryDb>;
  let a: Awaited<ReturnType<typeof seedCompany>>;
  let b: Awaited<ReturnType<typeof seedCompany>>;

  beforeAll(async () => {
    h = await startInventory('ledger');
    a = await seedCompany(h.bus, 1, [
      product('forbid', 5),
      product('allow', 5),
      product('redeliver', 10),
      product('multi-a', 3),
      product('multi-b', 1),
      product('servicio', null, { tipo: 'Servicio' }),
      product('adjust', 4),
      product('late', 8),
      product('retake', 2),
      product('event', 6),
      product('cause', 6),
      product('scan', 7, { barcode: '7501234567890', porcentaje_impuesto: '0' }),
    ]);
    b = await seedCompany(h.bus, 2, [product('forbid', 9)]);
  });
  afterAll(() => h?.close());

  const A = (venderSinStock = false) => tenant(1, { venderSinStock });
  const principal = () => a.bodegas.principal!;
  const reserve = (
    clave: string,
    lineas: Array<{ id_producto: number; cantidad: number | string }>,
    venderSinStock = false,
    bodega = principal(),
  ) => h.bus.request(inventorySubjects, 'inventory.stock.reserve', { clave, id_bodega: bodega, lineas }, A(venderSinStock));

  it('lets exactly 5 of 20 concurrent one-unit reservations through against stock 5 when selling without stock is forbidden', async () => {
    const id = a.productos.forbid!;
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => reserve(`forbid-${i}`, [{ id_producto: id, cantidad: 1 }])),
    );
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expect(r.reason).toMatchObject({
        code: 'BUSINESS_RULE',
        details: { 'lineas.0.cantidad': ['Stock insuficiente para el producto FORBID: disponible 0, solicitado 1'] },
      });
    }
    expect(await stockOf(h, id, principal())).toBe('0.000');
    expect((await movementsOf(h.db, id)).map((m) => m.tipo)).toEqual(['inventario_inicial', ...Array(5).fill('reserva')]);
  });

  it('lets all 20 through when the company sells without stock, leaving −15', async () => {
    const id = a.productos.allow!;
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => reserve(`allow-${i}`, [{ id_producto: id, cantidad: 1 }], true)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    expect(await stockOf(h, id, principal())).toBe('-15.000');
  });

  it('moves stock once for a reservation, its confirmation and a release, each delivered several times', async () => {
    const id = a.productos.redeliver!;
    const lineas = [{ id_producto: id, cantidad: '2.5' }];
    const first = await Promise.all([1, 2, 3].map(() => reserve('redeliver-1', lineas)));
    const again = await reserve('redeliver-1', lineas);
    expect([...first, again].filter((r) => r.aplicado)).toHaveLength(1);
    expect(again).toMatchObject({
      clave: 'redeliver-1',
      estado: 'reservada',
      id_bodega: principal(),
      lineas: [{ id_producto: id, cantidad: '2.500', mueve_stock: true }],
    });

    const confirms = await Promise.all(
      [1, 2, 3].map(() => h.bus.request(inventorySubjects, 'inventory.stock.confirm', { clave: 'redeliver-1' }, A())),
    );
    expect(confirms.map((c) => c.estado)).toEqual(['confirmada', 'confirmada', 'confirmada']);
    expect(confirms.filter((c) => c.aplicado)).toHaveLength(1);

    await reserve('redeliver-2', [{ id_producto: id, cantidad: 3 }]);
    expect(await stockOf(h, id, principal())).toBe('4.500');
    const releases = await Promise.all(
      [1, 2, 3, 4].map(() => h.bus.request(inventorySubjects, 'inventory.stock.release', { clave: 'redeliver-2' }, A())),
    );
    expect(releases.filter((r) => r.aplicado)).toHaveLength(1);
    expect(await reserve('redeliver-2', [{ id_producto: id, cantidad: 3 }])).toMatchObject({ estado: 'liberada', aplicado: false });

    expect(await stockOf(h, id, principal())).toBe('7.500');
    expect((await movementsOf(h.db, id)).map((m) => [m.tipo, m.cantidad, m.stock_resultante, m.clave])).toEqual([
      ['inventario_inicial', '10.000', '10.000', null],
      ['reserva', '-2.500', '7.500', 'redeliver-1'],
      ['reserva', '-3.000', '4.500', 'redeliver-2'],
      ['liberacion', '3.000', '7.500', 'redeliver-2'],
    ]);
    const err = await rejection(h.bus.request(inventorySubjects, 'inventory.stock.release', { clave: 'redeliver-1' }, A()));
    expect(err.code).toBe('CONFLICT');
  });

  it('refuses the whole reservation naming only the short lines, and moves nothing', async () => {
    const [ma, mb] = [a.productos['multi-a']!, a.productos['multi-b']!];
    const err = await rejection(
      reserve('multi-1', [
        { id_producto: ma, cantidad: 2 },
        { id_producto: mb, cantidad: 1 },
        { id_producto: mb, cantidad: 0.5 },
      ]),
    );
    expect(err.code).toBe('BUSINESS_RULE');
    expect(Object.keys(err.details ?? {})).toEqual(['lineas.1.cantidad', 'lineas.2.cantidad']);
    expect(err.details!['lineas.1.cantidad']).toEqual(['Stock insuficiente para el producto MULTI-B: disponible 1, solicitado 1.5']);
    expect([await stockOf(h, ma, principal()), await stockOf(h, mb, principal())]).toEqual(['3.000', '1.000']);
    // Nothing was recorded under the key: once it fits, the same key reserves.
    expect(
      await reserve('multi-1', [
        { id_producto: ma, cantidad: 2 },
        { id_producto: mb, cantidad: 1 },
      ]),
    ).toMatchObject({ aplicado: true });
  });

  it('never moves stock for services, and refuses unknown products and warehouses that are not usable', async () => {
    const svc = a.productos.servicio!;
    const res = await reserve('svc-1', [{ id_producto: svc, cantidad: 3 }]);
    expect(res.lineas).toEqual([{ id_producto: svc, cantidad: '3.000', mueve_stock: false }]);
    expect(await movementsOf(h.db, svc)).toEqual([]);

    const unknown = await rejection(reserve('bad-1', [{ id_producto: 999_999, cantidad: 1 }]));
    expect(unknown).toMatchObject({ code: 'VALIDATION_FAILED', details: { 'lineas.0.id_producto': ['El producto 999999 no existe'] } });
    const closed = await rejection(reserve('bad-2', [{ id_producto: svc, cantidad: 1 }], false, a.bodegas.vieja!));
    expect(closed.details).toEqual({ id_bodega: [`La sucursal de la bodega ${a.bodegas.vieja} está inactiva`] });
  });

  it('applies an adjustment once per key, relative or absolute, and refuses a decrease below zero when forbidden', async () => {
    const id = a.productos.adjust!;
    const req = {
      clave: 'devolucion:1',
      origen: 'devolucion',
      concepto: 'Devolución 1',
      lineas: [
        { id_producto: id, id_bodega: principal(), cantidad: 1.5 },
        { id_producto: id, id_bodega: a.bodegas.reserva!, stock: 10 },
      ],
    };
    const replies = await Promise.all([1, 2, 3].map(() => h.bus.request(inventorySubjects, 'inventory.stock.adjust', req, A())));
    expect(replies.filter((r) => r.aplicado)).toHaveLength(1);
    expect(replies.map((r) => r.movimientos)).toEqual(Array(3).fill(replies[0]!.movimientos));
    expect(replies[0]!.movimientos).toEqual([
      { id_producto: id, id_bodega: principal(), cantidad: '1.500', stock_resultante: '5.500' },
      { id_producto: id, id_bodega: a.bodegas.reserva!, cantidad: '10.000', stock_resultante: '10.000' },
    ]);

    const short = await rejection(
      h.bus.request(
        inventorySubjects,
        'inventory.stock.adjust',
        { clave: 'venta:9:put', origen: 'venta', lineas: [{ id_producto: id, id_bodega: principal(), cantidad: -6 }] },
        A(),
      ),
    );
    expect(short).toMatchObject({
      code: 'BUSINESS_RULE',
      details: { 'lineas.0.cantidad': ['Stock insuficiente para el producto ADJUST: disponible 5.5, solicitado 6'] },
    });
    expect(await stockOf(h, id, principal())).toBe('5.500');
    const allowed = await h.bus.request(
      inventorySubjects,
      'inventory.stock.adjust',
      { clave: 'venta:9:put', origen: 'venta', lineas: [{ id_producto: id, id_bodega: principal(), cantidad: -6 }] },
      A(true),
    );
    expect(allowed.movimientos[0]!.stock_resultante).toBe('-0.500');
  });

  it('records a release that overtakes its reservation, so the late reservation moves nothing', async () => {
    const id = a.productos.late!;
    expect(await h.bus.request(inventorySubjects, 'inventory.stock.release', { clave: 'late-1' }, A())).toMatchObject({
      estado: 'liberada',
      id_bodega: null,
      aplicado: true,
    });
    expect(await reserve('late-1', [{ id_producto: id, cantidad: 5 }])).toMatchObject({ estado: 'liberada', aplicado: false });
    expect(await stockOf(h, id, principal())).toBe('8.000');
    expect(await movementsOf(h.db, id)).toHaveLength(1);
  });

  it('takes the stock again when a released reservation is confirmed after all', async () => {
    const id = a.productos.retake!;
    await reserve('retake-1', [{ id_producto: id, cantidad: 2 }]);
    await h.bus.request(inventorySubjects, 'inventory.stock.release', { clave: 'retake-1' }, A());
    const confirmed = await h.bus.request(inventorySubjects, 'inventory.stock.confirm', { clave: 'retake-1' }, A());
    expect(confirmed).toMatchObject({ estado: 'confirmada', aplicado: true });
    expect(await stockOf(h, id, principal())).toBe('0.000');
    const missing = await rejection(h.bus.request(inventorySubjects, 'inventory.stock.confirm', { clave: 'never-reserved' }, A()));
    expect(missing.code).toBe('NOT_FOUND');
  });

  it('names the cause of an operation in the stock change of each of its movements: reserve, release, confirm after release, adjust, revert', async () => {
    const id = a.productos.cause!;
    const causa = { id_venta: 77, plataforma: 'shopify', id_pedido_plataforma: '450789469' } as const;
    await h.bus.request(
      inventorySubjects,
      'inventory.stock.reserve',
      { clave: 'cause-1', causa, id_bodega: principal(), lineas: [{ id_producto: id, cantidad: 2 }] },
      A(),
    );
    await h.bus.request(inventorySubjects, 'inventory.stock.release', { clave: 'cause-1' }, A());
    await h.bus.request(inventorySubjects, 'inventory.stock.confirm', { clave: 'cause-1' }, A());
    const lineas = [{ id_producto: id, id_bodega: principal(), cantidad: '1' }];
    await h.bus.request(
      inventorySubjects,
      'inventory.stock.adjust',
      { clave: 'cause-2', origen: 'devolucion', causa: { id_devolucion: 5 }, lineas },
      A(),
    );
    await h.bus.request(inventorySubjects, 'inventory.stock.revert', { clave: 'cause-2' }, A());
    const changes = await h.db
      .selectFrom('outbox')
      .select(sql<{ motivo: string; referencia: string }>`payload->'movimientos'->0`.as('movimiento'))
      .select(sql<unknown>`payload->'causa'`.as('causa'))
      .where(sql<boolean>`payload->'movimientos' @> ${JSON.stringify([{ id_producto: id }])}::jsonb`)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(changes.map((c) => [c.movimiento.motivo, c.movimiento.referencia, c.causa])).toEqual([
      ['reserva', 'cause-1', causa],
      ['liberacion', 'cause-1', causa],
      ['reserva', 'cause-1', causa],
      ['ajuste', 'cause-2', { id_devolucion: 5 }],
      ['ajuste', 'cause-2:revertido', { id_devolucion: 5 }],
    ]);
  });

  it('confirms a reservation from events.sales.sale.created, once however often the event arrives', async () => {
    const id = a.productos.event!;
    await reserve('sale-uuid-1', [{ id_producto: id, cantidad: 1 }]);
    const payload = { empresa_id: 1, id_venta: 41, clave_reserva: 'sale-uuid-1' };
    // The same outbox row published twice (the stream drops the copy), and a second event for the same sale.
    const outboxId = randomUUID();
    for (const msgId of [outboxId, outboxId, randomUUID()]) await publishEvent(h.bus, 'events.sales.sale.created', payload, { msgId });
    await eventually(async () => {
      const row = await h.db.selectFrom('reservas').select('estado').where('clave', '=', 'sale-uuid-1').executeTakeFirstOrThrow();
      expect(row.estado).toBe('confirmada');
    });
    // The first event confirms it in one statement; the second finds it confirmed and takes the full
    // path, which claims its id: once that claim is there, both were handled.
    await eventually(async () => {
      const processed = await h.db
        .selectFrom('processed_events')
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      expect(processed.n).toBe(1);
    });
    expect(await stockOf(h, id, principal())).toBe('5.000');
    expect(await movementsOf(h.db, id)).toHaveLength(2);
  });

  it('resolves products by id, codigo or barcode with their stock in the warehouse asked for', async () => {
    const sut = await h.bus.request(
      inventorySubjects,
      'inventory.product.resolve',
      {
        id_bodega: principal(),
        id_sucursal: a.sucursales.centro!,
        items: [{ id_producto: a.productos.scan! }, { codigo: 'SCAN' }, { codigo: '7501234567890' }, { codigo: 'NOPE' }],
      },
      A(),
    );
    expect(sut.bodega).toEqual({
      ok: true,
      id_bodega: principal(),
      nombre: 'Bodega Principal',
      id_sucursal: a.sucursales.centro,
      nombre_sucursal: 'Sucursal Centro',
    });
    expect(sut.items.slice(0, 3)).toEqual(
      Array(3).fill({
        ok: true,
        producto: expect.objectContaining({
          id: a.productos.scan,
          codigo: 'SCAN',
          precio: '10.5000',
          porcentaje_impuesto: '0.00',
          costo_promedio: '4.2500',
          tipo: 'Producto',
          enable: 1,
          stock: '7.000',
        }),
      }),
    );
    expect(sut.items[3]).toEqual({ ok: false, message: 'No existe un producto con código o código de barras "NOPE"' });
  });

  it('resolves the branch a sale names in the same request, as inventory.sucursal.resolve does', async () => {
    const resolve = (sucursal: { id_sucursal: number } | { sucursal: string }, ctx = A()) =>
      h.bus.request(
        inventorySubjects,
        'inventory.product.resolve',
        { sucursal, id_bodega: principal(), items: [{ id_producto: a.productos.scan! }] },
        ctx,
      );
    expect((await resolve({ sucursal: '  sucursal CENTRO ' })).sucursal).toEqual({
      ok: true,
      id_sucursal: a.sucursales.centro,
      nombre: 'Sucursal Centro',
    });
    expect((await resolve({ id_sucursal: a.sucursales.centro! })).sucursal).toEqual({
      ok: true,
      id_sucursal: a.sucursales.centro,
      nombre: 'Sucursal Centro',
    });
    expect((await resolve({ sucursal: 'Sucursal Sur' })).sucursal).toEqual({
      ok: false,
      message: 'La sucursal "Sucursal Sur" no existe o está inactiva',
    });
    expect((await resolve({ id_sucursal: a.sucursales.centro! }, tenant(2))).sucursal).toEqual({
      ok: false,
      message: `La sucursal ${a.sucursales.centro} no existe o está inactiva`,
    });
    const without = await h.bus.request(
      inventorySubjects,
      'inventory.product.resolve',
      { id_bodega: principal(), items: [{ id_producto: a.productos.scan! }] },
      A(),
    );
    expect(without).not.toHaveProperty('sucursal');
  });

  it('never lets one company resolve, reserve, confirm, release or adjust another company’s stock', async () => {
    const B = tenant(2);
    const theirs = b.productos.forbid!;
    const resolved = await h.bus.request(
      inventorySubjects,
      'inventory.product.resolve',
      { id_bodega: principal(), items: [{ id_producto: a.productos.scan! }, { codigo: 'SCAN' }] },
      B,
    );
    expect(resolved.bodega).toEqual({ ok: false, message: `La bodega ${principal()} no existe` });
    expect(resolved.items.every((i) => !i.ok)).toBe(true);
    const branches = await h.bus.request(
      inventorySubjects,
      'inventory.sucursal.resolve',
      { items: [{ id_sucursal: a.sucursales.centro! }, { sucursal: 'Sucursal Centro' }] },
      B,
    );
    expect(branches[0]).toEqual({ ok: false, message: `La sucursal ${a.sucursales.centro} no existe o está inactiva` });
    expect(branches[1]).toEqual({ ok: true, id_sucursal: b.sucursales.centro, nombre: 'Sucursal Centro' });

    const reserveA = await rejection(
      h.bus.request(
        inventorySubjects,
        'inventory.stock.reserve',
        { clave: 'x-1', id_bodega: principal(), lineas: [{ id_producto: a.productos.scan!, cantidad: 1 }] },
        B,
      ),
    );
    expect(Object.keys(reserveA.details ?? {}).sort()).toEqual(['id_bodega', 'lineas.0.id_producto']);
    const adjustA = await rejection(
      h.bus.request(
        inventorySubjects,
        'inventory.stock.adjust',
        { clave: 'x-2', origen: 'admin', lineas: [{ id_producto: a.productos.scan!, id_bodega: principal(), stock: 0 }] },
        B,
      ),
    );
    expect(adjustA.code).toBe('VALIDATION_FAILED');
    // A's own product with B's warehouse, and B's product with A's warehouse, are refused too.
    const mixed = await rejection(
      h.bus.request(
        inventorySubjects,
        'inventory.stock.reserve',
        { clave: 'x-3', id_bodega: b.bodegas.principal!, lineas: [{ id_producto: theirs, cantidad: 1 }] },
        A(),
      ),
    );
    expect(mixed.code).toBe('VALIDATION_FAILED');
    expect((await rejection(h.bus.request(inventorySubjects, 'inventory.stock.confirm', { clave: 'redeliver-1' }, B))).code).toBe(
      'NOT_FOUND',
    );
    await h.bus.request(inventorySubjects, 'inventory.stock.release', { clave: 'sale-uuid-1' }, B);

    expect(await stockOf(h, a.productos.scan!, principal())).toBe('7.000');
    expect(await stockOf(h, a.productos.event!, principal())).toBe('5.000');
    expect(await stockOf(h, theirs, b.bodegas.principal!)).toBe('9.000');
    const aReservation = await h.db
      .selectFrom('reservas')
      .select('estado')
      .where('empresa_id', '=', 1)
      .where('clave', '=', 'sale-uuid-1')
      .executeTakeFirstOrThrow();
    expect(aReservation.estado).toBe('confirmada');
  });

  it('keeps stock equal to the sum of its movements for every product and warehouse', async () => {
    const drift = await h.db
      .selectFrom('inventarios as i')
      .leftJoin(
        (eb) =>
          eb
            .selectFrom('movimientos')
            .select(['producto_id', 'bodega_id', sql<string>`sum(cantidad)`.as('total')])
            .groupBy(['producto_id', 'bodega_id'])
            .as('m'),
        (join) => join.onRef('m.producto_id', '=', 'i.producto_id').onRef('m.bodega_id', '=', 'i.bodega_id'),
      )
      .select(['i.producto_id', 'i.bodega_id', 'i.stock', 'm.total'])
      .where(sql<boolean>`i.stock <> coalesce(m.total, 0)`)
      .execute();
    expect(drift).toEqual([]);
    const [{ n }] = (await h.db
      .selectFrom('movimientos')
      .select(sql<number>`count(*)::int`.as('n'))
      .execute()) as [{ n: number }];
    expect(n).toBeGreaterThan(40);
  });
});
