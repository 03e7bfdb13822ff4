import { AppError, SaleUpdateRequest, isAppError } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import type { SalesDb } from '../src/db/tables';
import { adminHandlers } from '../src/handlers/admin.handlers';
import { createVentaHandler } from '../src/handlers/create-venta.handler';
import { updateVentaHandler } from '../src/handlers/update-venta.handler';
import { serveInventory, stubProducto, stubReserva } from './inventory-stub';
import { ANA, saleRequest, salesHarness, seedSales } from './sales.factories';

const ctx = tenant(1, { usuario: ANA });

/**
 * Inventory as the ledger behaves, in memory: reservations take stock, and an adjustment applies
 * its moves once per key; a key seen again answers the movements it recorded and moves nothing.
 */
class LedgerStub {
  readonly stock = new Map<string, number>();
  readonly adjusted: string[] = [];
  readonly recorded = new Map<string, Array<{ id_producto: number; id_bodega: number; cantidad: string; stock_resultante: string }>>();
  refuseNext = false;

  of(producto: number, bodega: number): number {
    return this.stock.get(`${producto}:${bodega}`) ?? 0;
  }

  move(producto: number, bodega: number, cantidad: number): string {
    const after = this.of(producto, bodega) + cantidad;
    this.stock.set(`${producto}:${bodega}`, after);
    return after.toFixed(3);
  }
}

describe('sales.update against Postgres and NATS', () => {
  let h: Harness<SalesDb>;
  let documentoId: number;
  let canalId: number;
  const ledger = new LedgerStub();
  /** Fails the transaction right after the adjustment answered, as many times as set. */
  let failAfterAdjust = 0;
  let create: ReturnType<typeof createVentaHandler>;
  let update: ReturnType<typeof updateVentaHandler>;
  let annul: ReturnType<typeof adminHandlers>['sales.admin.annul'];

  beforeAll(async () => {
    h = await salesHarness('sales-update');
    const now = new Date().toISOString();
    serveInventory(h.bus, {
      'inventory.product.resolve': async ({ id_bodega, items }) => ({
        bodega: {
          ok: true as const,
          id_bodega: id_bodega ?? 2,
          nombre: `Bodega ${id_bodega}`,
          id_sucursal: 1,
          nombre_sucursal: 'Centro',
        },
        items: items.map((item) => stubProducto('id_producto' in item ? item.id_producto : 5)),
      }),
      'inventory.stock.reserve': async (req) => {
        for (const l of req.lineas) ledger.move(l.id_producto, req.id_bodega, -Number(l.cantidad));
        return stubReserva(req.clave, 'reservada', req.id_bodega, now);
      },
      'inventory.stock.adjust': async ({ clave, lineas }) => {
        const seen = ledger.recorded.get(clave);
        if (seen) return { clave, aplicado: false, movimientos: seen };
        if (ledger.refuseNext) {
          ledger.refuseNext = false;
          throw AppError.rule('stock_insuficiente', 'Stock insuficiente y la empresa no permite vender sin stock', {
            'lineas.0.cantidad': ['Stock insuficiente para el producto P-5: disponible 0, solicitado 1'],
          });
        }
        const movimientos = lineas.map((l) => ({
          id_producto: l.id_producto,
          id_bodega: l.id_bodega,
          cantidad: l.cantidad!,
          stock_resultante: ledger.move(l.id_producto, l.id_bodega, Number(l.cantidad)),
        }));
        ledger.recorded.set(clave, movimientos);
        ledger.adjusted.push(clave);
        return { clave, aplicado: true, movimientos };
      },
    });
    ({ documentoId, canalId } = await seedSales(h.db, h.bus, ctx, {
      clientes: [{ ref: 'c', nombre: 'Cliente', limite_credito: '0', activo: true }],
    }));
    create = createVentaHandler({ db: h.db, bus: h.bus });
    update = updateVentaHandler({
      db: h.db,
      bus: h.bus,
      afterAdjust: () => {
        if (failAfterAdjust > 0) {
          failAfterAdjust -= 1;
          throw new Error('the process died before the commit');
        }
      },
    });
    annul = adminHandlers(h.db, h.bus)['sales.admin.annul'];
  });

  afterAll(() => h?.close());

  const pendingSale = async (cantidad: number, producto = 5) =>
    (
      await create(
        saleRequest({ documentoId, canalId }, { estado: 'Pendiente', id_cliente: 1, detalles: [{ id_producto: producto, cantidad }] }),
        ctx,
      )
    ).venta;
  const put = (id: number, cambios: unknown) => update(SaleUpdateRequest.parse({ id, cambios }), ctx);
  const setQuantity = (venta: { id: number; detalles: Array<{ id: number }> }, cantidad: number) =>
    put(venta.id, { detalles: [{ id: venta.detalles[0]!.id, cantidad }] });
  const revisionOf = async (id: number) =>
    (await h.db.selectFrom('ventas').select('revision_stock').where('id', '=', id).executeTakeFirstOrThrow()).revision_stock;
  const keysOf = (id: number) => ledger.adjusted.filter((k) => k.startsWith(`venta-${id}-rev-`));

  it('moves each change by its difference under the next revision of the sale, and nothing for a change that moves no stock', async () => {
    const venta = await pendingSale(5, 11);
    expect(ledger.of(11, 2)).toBe(-5);
    await setQuantity(venta, 3);
    await put(venta.id, { observaciones: 'solo texto' });
    await put(venta.id, { id_bodega: 7 });
    await put(venta.id, { estado: 'Cotizacion' });
    expect(keysOf(venta.id)).toEqual([`venta-${venta.id}-rev-1`, `venta-${venta.id}-rev-2`, `venta-${venta.id}-rev-3`]);
    expect(ledger.recorded.get(`venta-${venta.id}-rev-2`)).toEqual([
      expect.objectContaining({ id_producto: 11, id_bodega: 2, cantidad: '3.000' }),
      expect.objectContaining({ id_producto: 11, id_bodega: 7, cantidad: '-3.000' }),
    ]);
    expect([ledger.of(11, 2), ledger.of(11, 7)]).toEqual([0, 0]);
    expect(await revisionOf(venta.id)).toBe(3);
  });

  it('answers the sale as committed, with the line updated in place', async () => {
    const venta = await pendingSale(2, 12);
    const sut = await put(venta.id, { detalles: [{ id: venta.detalles[0]!.id, cantidad: 4 }], observaciones: 'ok' });
    expect(sut).toMatchObject({
      id: venta.id,
      correlativo: venta.correlativo,
      observaciones: 'ok',
      total: '45.20',
      saldo: '45.20',
      detalles: [{ id: venta.detalles[0]!.id, cantidad: '4.0000' }],
    });
  });

  it('consumes no revision and changes nothing when inventory refuses the difference', async () => {
    const venta = await pendingSale(1, 13);
    ledger.refuseNext = true;
    const refused = await setQuantity(venta, 9).catch((e: unknown) => e);
    expect(isAppError(refused) && [refused.code, refused.details]).toEqual([
      'BUSINESS_RULE',
      { 'detalles.0.cantidad': ['Stock insuficiente para el producto P-5: disponible 0, solicitado 1'] },
    ]);
    expect(await revisionOf(venta.id)).toBe(0);
    await setQuantity(venta, 2);
    expect(keysOf(venta.id)).toEqual([`venta-${venta.id}-rev-1`]);
    expect(ledger.of(13, 2)).toBe(-2);
  });

  it('after a change died between the adjustment and the commit, moves nothing more for its retry', async () => {
    const venta = await pendingSale(5, 14);
    failAfterAdjust = 1;
    await expect(setQuantity(venta, 2)).rejects.toThrow('the process died before the commit');
    expect(ledger.of(14, 2)).toBe(-2);
    expect(await revisionOf(venta.id)).toBe(0);
    await setQuantity(venta, 2);
    expect(ledger.of(14, 2)).toBe(-2);
    expect(keysOf(venta.id)).toEqual([`venta-${venta.id}-rev-1`]);
    expect(await revisionOf(venta.id)).toBe(1);
  });

  it('squares several changes that died in a row with the first change that commits', async () => {
    const venta = await pendingSale(5, 15);
    failAfterAdjust = 3;
    await expect(setQuantity(venta, 1)).rejects.toThrow(); // rev-1: +4
    await expect(put(venta.id, { id_bodega: 8 })).rejects.toThrow(); // rev-1 seen, rest under rev-2
    await expect(put(venta.id, { estado: 'Cotizacion' })).rejects.toThrow(); // rev-1, rev-2 seen, rest under rev-3
    expect(await revisionOf(venta.id)).toBe(0);
    const sut = await setQuantity(venta, 6);
    expect(sut.detalles[0]!.cantidad).toBe('6.0000');
    expect([ledger.of(15, 2), ledger.of(15, 8)]).toEqual([-6, 0]);
    expect(await revisionOf(venta.id)).toBe(keysOf(venta.id).length);
  });

  it('serialises 20 concurrent changes of one sale: consecutive revisions, stock equal to the final lines', async () => {
    const venta = await pendingSale(5, 16);
    const quantities = Array.from({ length: 20 }, (_, i) => (i % 7) + 1);
    await Promise.all(quantities.map((q) => setQuantity(venta, q)));
    const final = await put(venta.id, {});
    expect(ledger.of(16, 2)).toBe(-Number(final.detalles[0]!.cantidad));
    const revision = await revisionOf(venta.id);
    expect(keysOf(venta.id)).toEqual(Array.from({ length: revision }, (_, i) => `venta-${venta.id}-rev-${i + 1}`));
  });

  it('ends changes racing an annulment annulled, with exactly the stock the sale held given back', async () => {
    const venta = await pendingSale(5, 17);
    const outcomes = await Promise.allSettled([
      setQuantity(venta, 8),
      annul({ empresa_id: 1, id_venta: venta.id }, ctx),
      setQuantity(venta, 2),
    ]);
    expect(outcomes[1]!.status).toBe('fulfilled');
    for (const o of [outcomes[0]!, outcomes[2]!]) {
      if (o.status === 'rejected') expect(isAppError(o.reason) && o.reason.message).toBe('La venta está anulada y no se puede modificar');
    }
    expect(ledger.of(17, 2)).toBe(0);
    expect((await h.db.selectFrom('ventas').select('estado').where('id', '=', venta.id).executeTakeFirstOrThrow()).estado).toBe('Anulada');
  });

  it('refuses a sale with active returns and moves nothing', async () => {
    const venta = await pendingSale(3, 19);
    await h.db.updateTable('ventas').set({ devoluciones_activas: 1, monto_devuelto: '11.30' }).where('id', '=', venta.id).execute();
    const refused = await setQuantity(venta, 1).catch((e: unknown) => e);
    expect(isAppError(refused) && [refused.code, refused.message]).toEqual([
      'BUSINESS_RULE',
      'La venta tiene devoluciones activas y no se puede modificar',
    ]);
    expect(keysOf(venta.id)).toEqual([]);
    expect(ledger.of(19, 2)).toBe(-3);
  });

  it('annuls in the same revision sequence: a change that died before it is squared, not returned twice', async () => {
    const venta = await pendingSale(5, 18);
    failAfterAdjust = 1;
    await expect(setQuantity(venta, 2)).rejects.toThrow(); // rev-1 gave 3 back; the sale still says 5
    await annul({ empresa_id: 1, id_venta: venta.id }, ctx);
    expect(ledger.of(18, 2)).toBe(0);
    expect(keysOf(venta.id)).toEqual([`venta-${venta.id}-rev-1`, `venta-${venta.id}-rev-2`]);
    expect(ledger.recorded.get(`venta-${venta.id}-rev-2`)).toEqual([expect.objectContaining({ cantidad: '2.000' })]);
  });
});
