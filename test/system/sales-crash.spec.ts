import type { SeedOutput } from '@erp/back-office';
import { spawnService } from '../support/processes';
import { Stack, stackEnv } from '../support/stack';
import { eventually } from '@erp/testing';
import {
  CRASH_GATEWAY,
  SALES_KEY_A,
  ledgerOf,
  postSale,
  refsOf,
  saleBody,
  salesFixture,
  startFastSweepingInventory,
  type SalesRefs,
} from '../support/sales-fixture';
import { stockOf } from '../../services/inventory/test/inventory.factories';

/**
 * The sales service dies (SIGKILL, injected through its chaos-testing setting) between
 * inventory's reservation and the sale's commit, and between the commit and the confirmation.
 * After a restart, stock must be exactly right: nothing leaked, nothing taken twice.
 */
describe('a sales crash in the middle of the invoicing saga', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'], gateway: CRASH_GATEWAY });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
    await stack.stopService('sales'); // the sales under test runs as its own process
    await startFastSweepingInventory(stack, { reservationMs: 1_000, sweepMs: 200, checkMs: 500 });
  });
  afterAll(() => stack.stop());

  const crashingSales = (fault: string) => spawnService('sales', stackEnv(stack.iso, { SALES_FAULT_INJECTION: fault }));
  const reservasOf = (clave: string) => stack.query('select estado from inventory.reservas where clave = $1', [clave]);
  /** What each stock change of a reservation was told to partners it was made for, in order. */
  const causesOf = (clave: string) =>
    stack.query<{ motivo: string; id_venta: number | null }>(
      `select payload->'movimientos'->0->>'motivo' as motivo, (payload->'causa'->>'id_venta')::int as id_venta
         from inventory.outbox where subject like '%events.inventory.stock.changed' and payload->'movimientos'->0->>'referencia' = $1
        order by created_at, id`,
      [clave],
    );

  it('after reserve, before commit: no sale, and the orphaned reservation is released once sales is back', async () => {
    const mouse = a.productos.mouse!;
    const principal = a.bodegas.principal!;
    const before = await stockOf(stack, mouse, principal);
    const sales = await crashingSales('exit-after-reserve');

    const { status } = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, { referencia_externa: 'CRASH-1', detalles: [{ id_producto: mouse, cantidad: 3 }] }),
    );
    expect([503, 504]).toContain(status);
    await sales.exit;
    expect(sales.child.signalCode).toBe('SIGKILL');
    expect(await stack.query("select id from sales.ventas where referencia_externa = 'CRASH-1'")).toEqual([]);
    const [orphan] = await stack.query<{ clave: string; estado: string }>(
      "select clave, estado from inventory.reservas where estado = 'reservada' and lineas @> $1::jsonb",
      [JSON.stringify([{ id_producto: mouse }])],
    );
    expect(orphan).toBeDefined();
    expect(Number(await stockOf(stack, mouse, principal))).toBe(Number(before) - 3);

    await stack.startService('sales');
    await eventually(async () => expect(await reservasOf(orphan!.clave)).toEqual([{ estado: 'liberada' }]), 15_000);
    expect(await stockOf(stack, mouse, principal)).toBe(before);
    expect(await ledgerOf(stack, mouse, principal)).toMatchObject({ stock: before });
    // Both changes name the id the sale had taken; no sale has it.
    const causes = await causesOf(orphan!.clave);
    expect(causes).toEqual([
      { motivo: 'reserva', id_venta: expect.any(Number) },
      { motivo: 'liberacion', id_venta: causes[0]!.id_venta },
    ]);
    expect(await stack.query('select id from sales.ventas where id = $1', [causes[0]!.id_venta])).toEqual([]);

    // The client's retry now creates the sale, once.
    const retry = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, { referencia_externa: 'CRASH-1', detalles: [{ id_producto: mouse, cantidad: 3 }] }),
    );
    expect(retry.status).toBe(201);
    expect(Number(await stockOf(stack, mouse, principal))).toBe(Number(before) - 3);
    expect(retry.body.data.id).not.toBe(causes[0]!.id_venta);
    await stack.stopService('sales');
  });

  it('a sale without a reference reserves before its transaction: killed right after, no sale is written and the reservation is released', async () => {
    const mouse = a.productos.mouse!;
    const principal = a.bodegas.principal!;
    const before = await stockOf(stack, mouse, principal);
    const salesBefore = await stack.query('select count(*)::int as n from sales.ventas');
    const sales = await crashingSales('exit-after-reserve');

    const { status } = await postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: mouse, cantidad: 2 }] }));
    expect([503, 504]).toContain(status);
    await sales.exit;
    expect(sales.child.signalCode).toBe('SIGKILL');
    expect(await stack.query('select count(*)::int as n from sales.ventas')).toEqual(salesBefore);
    const [orphan] = await stack.query<{ clave: string }>(
      "select clave from inventory.reservas where estado = 'reservada' and lineas @> $1::jsonb",
      [JSON.stringify([{ id_producto: mouse }])],
    );
    expect(orphan).toBeDefined();
    expect(Number(await stockOf(stack, mouse, principal))).toBe(Number(before) - 2);

    await stack.startService('sales');
    await eventually(async () => expect(await reservasOf(orphan!.clave)).toEqual([{ estado: 'liberada' }]), 15_000);
    expect(await stockOf(stack, mouse, principal)).toBe(before);
    expect(await ledgerOf(stack, mouse, principal)).toMatchObject({ stock: before });
    await stack.stopService('sales');
  });

  it('after commit, before the event is published: the sale keeps its stock, confirmed once after restart', async () => {
    const laptop = a.productos.laptop!;
    const principal = a.bodegas.principal!;
    const before = Number(await stockOf(stack, laptop, principal));
    const sales = await crashingSales('exit-after-commit');

    const { status } = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, { referencia_externa: 'CRASH-2', detalles: [{ id_producto: laptop, cantidad: 2 }] }),
    );
    expect([503, 504]).toContain(status);
    await sales.exit;
    expect(sales.child.signalCode).toBe('SIGKILL');
    const [venta] = await stack.query<{ id: number; clave_reserva: string }>(
      "select id, clave_reserva from sales.ventas where referencia_externa = 'CRASH-2'",
    );
    expect(venta).toBeDefined();
    expect(await stack.query('select count(*)::int as n from sales.outbox where published_at is null')).toEqual([{ n: 1 }]);
    expect(Number(await stockOf(stack, laptop, principal))).toBe(before - 2);

    await stack.startService('sales');
    await eventually(async () => expect(await reservasOf(venta!.clave_reserva)).toEqual([{ estado: 'confirmada' }]), 15_000);
    // Its stock was reserved before the sale was written, under the id it was written with.
    expect(await causesOf(venta!.clave_reserva)).toEqual([{ motivo: 'reserva', id_venta: venta!.id }]);
    await eventually(async () =>
      expect(await stack.query('select count(*)::int as n from sales.outbox where published_at is null')).toEqual([{ n: 0 }]),
    );

    // The retry finds the sale; stock moved exactly once for it.
    const retry = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, { referencia_externa: 'CRASH-2', detalles: [{ id_producto: laptop, cantidad: 2 }] }),
    );
    expect(retry.status).toBe(200);
    expect(retry.body.data.id).toBe(venta!.id);
    expect(Number(await stockOf(stack, laptop, principal))).toBe(before - 2);
    expect(await ledgerOf(stack, laptop, principal)).toMatchObject({ stock: (before - 2).toFixed(3) });
    expect(await stack.query('select count(*)::int as n from inventory.movimientos where clave = $1', [venta!.clave_reserva])).toEqual([
      { n: 1 },
    ]);
  });
});
