import { sql } from 'kysely';
import { Sale, SaleUpdateRequest, SalesFilters, SalesListRequest } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import type { SalesDb } from '../src/db/tables';
import { findVentaJson } from '../src/db/venta-json.repository';
import { listVentas, summarizeVentas } from '../src/db/venta-list.repository';
import { findVenta } from '../src/db/venta-read.repository';
import { adminHandlers } from '../src/handlers/admin.handlers';
import { createVentaHandler } from '../src/handlers/create-venta.handler';
import { updateVentaHandler } from '../src/handlers/update-venta.handler';
import { STUB_BODEGA, serveInventory, stubProducto } from './inventory-stub';
import { ANA, saleRequest, salesHarness, seedSales } from './sales.factories';

const ctx = tenant(1, { usuario: ANA });

/** Rows of the summary that hold sales, and the same aggregate computed from the sales themselves. */
const SUMMARY = sql`
  select empresa_id, fecha, estado, documento_id, cantidad, total, iva, descuento
    from sales.ventas_resumen_diario where cantidad > 0 order by empresa_id, fecha, estado, documento_id`;
const AGGREGATE = sql`
  select empresa_id, fecha, estado, documento_id, count(*)::int as cantidad, sum(total) as total, sum(iva) as iva, sum(descuento) as descuento
    from sales.ventas group by empresa_id, fecha, estado, documento_id order by empresa_id, fecha, estado, documento_id`;

describe('ventas_resumen_diario against Postgres', () => {
  let h: Harness<SalesDb>;
  let factura: number;
  let ticket: number;
  let canalId: number;
  let create: ReturnType<typeof createVentaHandler>;
  let update: ReturnType<typeof updateVentaHandler>;
  let annul: ReturnType<typeof adminHandlers>['sales.admin.annul'];

  beforeAll(async () => {
    h = await salesHarness('sales-summary', { poolMax: 12 });
    serveInventory(h.bus, {
      'inventory.product.resolve': async ({ items }) => ({
        bodega: STUB_BODEGA,
        items: items.map((item) => {
          const id = 'id_producto' in item ? item.id_producto : 5;
          // Prices differ per product so totals differ per sale: 11.30, 22.60, …
          return stubProducto(id, { precio: (((id % 7) + 1) * 11.3).toFixed(2) });
        }),
      }),
    });
    const seeded = await seedSales(h.db, h.bus, ctx, {
      documentos: [{ ref: 't', nombre: 'Ticket', id_sucursal: 1, prefijo: 'T-', correlativo: 1, activo: true, solo_cotizacion: false }],
      clientes: [{ ref: 'c', nombre: 'Cliente', limite_credito: '0', activo: true }],
    });
    factura = seeded.documentoId;
    ticket = seeded.documentos.t!;
    canalId = seeded.canalId;
    create = createVentaHandler({ db: h.db, bus: h.bus });
    update = updateVentaHandler({ db: h.db, bus: h.bus });
    annul = adminHandlers(h.db, h.bus)['sales.admin.annul'];
  });

  afterAll(() => h?.close());

  const sale = async (over: Record<string, unknown> = {}) =>
    (
      await create(
        saleRequest({ documentoId: factura, canalId }, { detalles: [{ id_producto: 5, cantidad: 1, descuento: 1 }], ...over }),
        ctx,
      )
    ).venta;
  const put = (id: number, cambios: unknown) => update(SaleUpdateRequest.parse({ id, cambios }), ctx);
  const expectSummaryEqualToSales = async () => {
    expect((await SUMMARY.execute(h.db)).rows).toEqual((await AGGREGATE.execute(h.db)).rows);
    // A row left at zero sales holds zero sums.
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from sales.ventas_resumen_diario where cantidad = 0 and (total, iva, descuento) <> (0, 0, 0)`.execute(
      h.db,
    );
    expect(rows[0]!.n).toBe(0);
  };

  it('counts and sums each created sale under its company, date, state and document type', async () => {
    await sale();
    await sale({ fecha: '2026-02-02', detalles: [{ id_producto: 6, cantidad: 3 }] });
    await sale({ id_documento: ticket, estado: 'Pendiente', id_cliente: 1 });
    await sale({ estado: 'Cotizacion' });
    await expectSummaryEqualToSales();
  });

  it('follows updates that change the total, the date, the state and the document type', async () => {
    const venta = await sale({ estado: 'Pendiente', id_cliente: 1, fecha: '2026-02-03' });
    await put(venta.id, { detalles: [{ id: venta.detalles[0]!.id, cantidad: 4 }] });
    await expectSummaryEqualToSales();
    await put(venta.id, { fecha: '2026-01-15' });
    await expectSummaryEqualToSales();
    await put(venta.id, { id_documento: ticket, observaciones: 'otro documento' });
    await expectSummaryEqualToSales();
    await put(venta.id, { estado: 'Completada', detalles: [{ id: venta.detalles[0]!.id, cantidad: 2 }] });
    await expectSummaryEqualToSales();
  });

  it('moves an annulled sale to the Anulada row and leaves a row it emptied at zero', async () => {
    const venta = await sale({ estado: 'Pendiente', id_cliente: 1, fecha: '2026-03-01', id_documento: ticket });
    await annul({ empresa_id: 1, id_venta: venta.id }, ctx);
    await expectSummaryEqualToSales();
    const emptied = await h.db
      .selectFrom('ventas_resumen_diario')
      .select(['cantidad', 'total'])
      .where('empresa_id', '=', 1)
      .where('fecha', '=', '2026-03-01')
      .where('estado', '=', 'Pendiente')
      .executeTakeFirstOrThrow();
    expect(emptied).toEqual({ cantidad: 0, total: '0.00' });
    expect(
      (await summarizeVentas(h.db, 1, SalesFilters.parse({ fecha_inicio: '2026-03-01', fecha_fin: '2026-03-01' }))).map((r) => r.estado),
    ).toEqual(['Anulada']);
  });

  it('stays exact under concurrent creations on one document type and across two', async () => {
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        sale({
          id_documento: i % 3 === 0 ? ticket : factura,
          estado: i % 2 === 0 ? 'Completada' : 'Pendiente',
          id_cliente: 1,
          detalles: [{ id_producto: 5 + (i % 5), cantidad: 1 + (i % 4) }],
        }),
      ),
    );
    await expectSummaryEqualToSales();
  });

  it('follows a sale deleted by hand', async () => {
    const venta = await sale({ fecha: '2026-04-01' });
    await sql`delete from sales.venta_detalles where venta_id = ${venta.id}`.execute(h.db);
    await sql`delete from sales.ventas where id = ${venta.id}`.execute(h.db);
    await expectSummaryEqualToSales();
  });

  it('never deadlocks two updates that move sales between the same two rows in opposite directions', async () => {
    // Rows K1 (Completada) < K2 (Pendiente) of one day and document type. A third transaction holds
    // K1; A moves K1 → K2 and waits; B moves K2 → K1 and waits; then the holder commits. Taking
    // rows in the order the sale moves (old row first) would let B hold K2 while waiting for K1 and
    // A hold K1 while waiting for K2; in key order both wait for K1 first.
    const a = await sale({ fecha: '2026-05-01', estado: 'Completada' });
    const b = await sale({ fecha: '2026-05-01', estado: 'Pendiente', id_cliente: 1 });
    const holder = await h.pool.connect();
    const first = await h.pool.connect();
    const second = await h.pool.connect();
    const waiting = async (n: number) => {
      for (let i = 0; i < 200; i++) {
        const { rows } = await h.pool.query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        if (rows[0].n >= n) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`${n} transactions never waited for a lock`);
    };
    try {
      await holder.query('begin');
      await holder.query(
        `select 1 from sales.ventas_resumen_diario where empresa_id = 1 and fecha = '2026-05-01' and estado = 'Completada' and documento_id = $1 for update`,
        [factura],
      );
      const moveA = first.query(`update sales.ventas set estado = 'Pendiente' where id = $1`, [a.id]);
      await waiting(1);
      const moveB = second.query(`update sales.ventas set estado = 'Completada' where id = $1`, [b.id]);
      await waiting(2);
      await holder.query('commit');
      await expect(Promise.all([moveA, moveB])).resolves.toBeDefined();
    } finally {
      holder.release();
      first.release();
      second.release();
    }
    await expectSummaryEqualToSales();
  });

  it('answers the list count and the summary from the table exactly as a scan of the sales', async () => {
    const filters = [
      {},
      { estado: 'Pendiente' },
      { fecha_inicio: '2026-02-01', fecha_fin: '2026-02-02' },
      { fecha_inicio: '2026-02-01', estado: 'Completada' },
    ];
    for (const f of filters) {
      const parsed = SalesFilters.parse(f);
      let scan = h.db.selectFrom('ventas').where('empresa_id', '=', 1);
      if (parsed.fecha_inicio) scan = scan.where('fecha', '>=', parsed.fecha_inicio);
      if (parsed.fecha_fin) scan = scan.where('fecha', '<=', parsed.fecha_fin);
      if (parsed.estado) scan = scan.where('estado', '=', parsed.estado);
      const expected = await scan
        .select([
          'estado',
          sql<number>`count(*)::int`.as('cantidad'),
          sql<string>`sum(total)`.as('total'),
          sql<string>`sum(iva)`.as('iva'),
          sql<string>`sum(descuento)`.as('descuento'),
        ])
        .groupBy('estado')
        .orderBy('estado')
        .execute();
      const summary = await summarizeVentas(h.db, 1, parsed);
      expect([...summary].sort((x, y) => x.estado.localeCompare(y.estado))).toEqual(expected);
      const count = expected.reduce((n, r) => n + r.cantidad, 0);
      for (const order_by of ['fecha', 'total'] as const) {
        const page = await listVentas(h.db, 1, SalesListRequest.parse({ ...f, order_by, per_page: 200 }));
        expect({ order_by, f, total: page.total, items: (JSON.parse(page.json) as unknown[]).length }).toEqual({
          order_by,
          f,
          total: count,
          items: count,
        });
      }
    }
  });

  it('walks every page of the list ordered by date in both directions, each sale once, as an OFFSET scan orders them', async () => {
    for (const order_direction of ['desc', 'asc'] as const) {
      const expected = await h.db
        .selectFrom('ventas')
        .select('id')
        .where('empresa_id', '=', 1)
        .orderBy('fecha', order_direction)
        .orderBy('id', order_direction)
        .execute();
      const seen: number[] = [];
      for (let page = 1; page <= Math.ceil(expected.length / 7) + 1; page++) {
        const { total, json } = await listVentas(h.db, 1, SalesListRequest.parse({ page, per_page: 7, order_direction }));
        expect(total).toBe(expected.length);
        seen.push(...(JSON.parse(json) as Array<{ id: number }>).map((s) => s.id));
      }
      expect(seen).toEqual(expected.map((r) => r.id));
    }
  });

  it('answers each sale, alone and in pages, as the very JSON the write paths answer it', async () => {
    const ids = (
      await h.db.selectFrom('ventas').select('id').where('empresa_id', '=', 1).orderBy('fecha', 'desc').orderBy('id', 'desc').execute()
    ).map((r) => r.id);
    const states = await h.db.selectFrom('ventas').select('estado').distinct().execute();
    expect(states.length).toBeGreaterThanOrEqual(3);
    const written: string[] = [];
    for (const id of ids) {
      const json = JSON.stringify(Sale.parse(await findVenta(h.db, 1, id)));
      expect(await findVentaJson(h.db, 1, id)).toBe(json);
      written.push(json);
    }
    const { json } = await listVentas(h.db, 1, SalesListRequest.parse({ per_page: 200 }));
    expect(json).toBe(`[${written.slice(0, 200).join(',')}]`);
    expect(await findVentaJson(h.db, 2, ids[0]!)).toBeUndefined();
  });

  it('empties when the sales are truncated', async () => {
    await sql`truncate sales.ventas cascade`.execute(h.db);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from sales.ventas_resumen_diario`.execute(h.db);
    expect(rows[0]!.n).toBe(0);
  });
});
