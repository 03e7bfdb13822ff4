import type { SeedOutput } from '@erp/back-office';
import { salesAdminSubjects } from '@erp/contracts';
import { eventually } from '@erp/testing';
import { spawnService } from '../support/processes';
import { Stack, json, stackEnv } from '../support/stack';
import {
  CRASH_GATEWAY,
  API,
  SALES_KEY_A,
  SALES_KEY_B,
  SALES_KEY_STRICT,
  dataSnapshot,
  ledgerOf,
  postSale,
  refsOf,
  saleBody,
  salesFixture,
  type SalesRefs,
} from '../support/sales-fixture';
import { stockOf } from '../../services/inventory/test/inventory.factories';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('PUT /sales/{id}: editing Pendiente sales and quotations, stock moving by the difference', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;
  let b: SalesRefs;
  let d: SalesRefs;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'], gateway: CRASH_GATEWAY });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
    b = refsOf(seeded, 'b');
    d = refsOf(seeded, 'd');
  });
  afterAll(() => stack.stop());

  const putSale = async (id: number | string, body: unknown, key = SALES_KEY_A, raw?: string) => {
    const res = await stack.api(`${API}/sales/${id}`, {
      key,
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: raw ?? JSON.stringify(body),
    });
    return { status: res.status, body: await json(res) };
  };
  const getSale = async (id: number, key = SALES_KEY_A) => (await json(await stack.api(`${API}/sales/${id}`, { key }))).data;
  const annul = (empresaId: number, id: number) =>
    stack.admin.request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: empresaId, id_venta: id }, { requestId: 'test-annul' });
  /** Everything stored for a sale: its row (revision and document included) and its lines. */
  const storedSale = async (id: number) =>
    (
      await stack.query(
        `select to_jsonb(v) as venta, (select jsonb_agg(to_jsonb(d) order by d.id) from sales.venta_detalles d where d.venta_id = v.id) as lineas
         from sales.ventas v where v.id = $1`,
        [id],
      )
    )[0];
  const mouse = () => a.productos.mouse!;
  const principal = () => a.bodegas.principal!;
  const stock = async (producto = mouse(), bodega = principal()) => Number(await stockOf(stack, producto, bodega));
  const create = async (overrides: Record<string, unknown>, key = SALES_KEY_A, refs = a) => {
    const { status, body } = await postSale(stack, key, saleBody(refs, overrides));
    expect(status).toBe(201);
    return body.data;
  };
  const pendiente = (cantidad = 5, extra: Record<string, unknown> = {}) =>
    create({ estado: 'Pendiente', id_cliente: a.clientes.libre, detalles: [{ id_producto: mouse(), cantidad }], ...extra });
  const cotizacion = (cantidad = 5, extra: Record<string, unknown> = {}) =>
    create({ estado: 'Cotizacion', id_canal: undefined, detalles: [{ id_producto: mouse(), cantidad }], ...extra });

  // Mouse: 19.95 with tax at 13 %. Totals by quantity: [total, sub_total, iva].
  const MOUSE: Record<number, [number, number, number]> = { 3: [59.85, 52.96, 6.89], 5: [99.75, 88.27, 11.48], 8: [159.6, 141.24, 18.36] };

  describe('the transitions of the spec, with the resulting state, stock and totals', () => {
    type From = 'Pendiente' | 'Cotizacion' | 'Anulada' | 'Completada' | 'Pendiente con documento fiscal';
    interface Row {
      from: From;
      body: () => Record<string, unknown>;
      status: 200 | 422;
      estado: string;
      /** Change of the mouse stock in the principal warehouse (+ returned, − taken). */
      stock: number;
      cantidad: 3 | 5 | 8;
      extra?: Record<string, unknown>;
      /** On a refusal: a field of `details`. */
      field?: string;
    }
    const rows: Array<[string, Row]> = [
      [
        'Pendiente, 5 → 3 units: returns 2',
        {
          from: 'Pendiente',
          body: () => ({ detalles: [{ id_producto: mouse(), cantidad: 3 }] }),
          status: 200,
          estado: 'Pendiente',
          stock: 2,
          cantidad: 3,
          extra: { saldo: 59.85 },
        },
      ],
      [
        'Pendiente → Completada: keeps its stock, owes nothing',
        {
          from: 'Pendiente',
          body: () => ({ estado: 'Completada' }),
          status: 200,
          estado: 'Completada',
          stock: 0,
          cantidad: 5,
          extra: { saldo: 0, cotizacion: false },
        },
      ],
      [
        'Pendiente → Pagada: stored Completada, paid in full',
        {
          from: 'Pendiente',
          body: () => ({ estado: 'Pagada' }),
          status: 200,
          estado: 'Completada',
          stock: 0,
          cantidad: 5,
          extra: { monto_pago: 99.75, saldo: 0 },
        },
      ],
      [
        'Pendiente → Cotizacion: returns its stock',
        {
          from: 'Pendiente',
          body: () => ({ estado: 'Cotizacion' }),
          status: 200,
          estado: 'Cotizacion',
          stock: 5,
          cantidad: 5,
          extra: { cotizacion: true, saldo: 0 },
        },
      ],
      [
        'Pendiente → Pre-venta: a quotation, returns its stock',
        {
          from: 'Pendiente',
          body: () => ({ estado: 'Pre-venta' }),
          status: 200,
          estado: 'Cotizacion',
          stock: 5,
          cantidad: 5,
          extra: { cotizacion: true },
        },
      ],
      [
        'Cotizacion → Completada: takes its stock',
        {
          from: 'Cotizacion',
          body: () => ({ estado: 'Completada', id_canal: a.canales.tienda }),
          status: 200,
          estado: 'Completada',
          stock: -5,
          cantidad: 5,
          extra: { cotizacion: false },
        },
      ],
      [
        'Cotizacion → Pagada with final lines: takes their stock, paid in full',
        {
          from: 'Cotizacion',
          body: () => ({ estado: 'Pagada', id_canal: a.canales.tienda, detalles: [{ id_producto: mouse(), cantidad: 8 }] }),
          status: 200,
          estado: 'Completada',
          stock: -8,
          cantidad: 8,
          extra: { monto_pago: 159.6, saldo: 0 },
        },
      ],
      [
        'Cotizacion → Pendiente with a customer: takes its stock, owes its total',
        {
          from: 'Cotizacion',
          body: () => ({ estado: 'Pendiente', id_canal: a.canales.tienda, id_cliente: a.clientes.libre }),
          status: 200,
          estado: 'Pendiente',
          stock: -5,
          cantidad: 5,
          extra: { saldo: 99.75, nombre_cliente: 'Ferretería Libre' },
        },
      ],
      [
        'Cotizacion → Pre-venta, 5 → 3 units: still a quotation, no stock',
        {
          from: 'Cotizacion',
          body: () => ({ estado: 'Pre-venta', detalles: [{ id_producto: mouse(), cantidad: 3 }] }),
          status: 200,
          estado: 'Cotizacion',
          stock: 0,
          cantidad: 3,
        },
      ],
      [
        'Cotizacion → Completada without a channel: refused',
        {
          from: 'Cotizacion',
          body: () => ({ estado: 'Completada' }),
          status: 422,
          estado: 'Cotizacion',
          stock: 0,
          cantidad: 5,
          field: 'id_canal',
        },
      ],
      [
        'Cotizacion → Pendiente without a customer: refused',
        {
          from: 'Cotizacion',
          body: () => ({ estado: 'Pendiente', id_canal: a.canales.tienda }),
          status: 422,
          estado: 'Cotizacion',
          stock: 0,
          cantidad: 5,
          field: 'id_cliente',
        },
      ],
      [
        'Anulada: refused, unchanged',
        { from: 'Anulada', body: () => ({ estado: 'Pendiente' }), status: 422, estado: 'Anulada', stock: 0, cantidad: 5, field: 'estado' },
      ],
      [
        'Completada: refused, unchanged',
        {
          from: 'Completada',
          body: () => ({ observaciones: 'tarde' }),
          status: 422,
          estado: 'Completada',
          stock: 0,
          cantidad: 5,
          field: 'estado',
        },
      ],
      [
        'a fiscal document emitted: refused, unchanged',
        {
          from: 'Pendiente con documento fiscal',
          body: () => ({ detalles: [{ id_producto: mouse(), cantidad: 3 }] }),
          status: 422,
          estado: 'Pendiente',
          stock: 0,
          cantidad: 5,
          field: 'documento_fiscal_emitido',
        },
      ],
    ];

    const saleFrom = async (from: From) => {
      switch (from) {
        case 'Pendiente':
          return pendiente();
        case 'Cotizacion':
          return cotizacion();
        case 'Completada':
          return create({ detalles: [{ id_producto: mouse(), cantidad: 5 }] });
        case 'Anulada': {
          const venta = await create({ detalles: [{ id_producto: mouse(), cantidad: 5 }] });
          return annul(a.id, venta.id);
        }
        case 'Pendiente con documento fiscal': {
          const venta = await pendiente();
          return stack.admin.request(
            salesAdminSubjects,
            'sales.admin.fiscal-emitted',
            { empresa_id: a.id, id_venta: venta.id },
            { requestId: 'test-fiscal' },
          );
        }
      }
    };

    it.each(rows)('%s', async (_name, row) => {
      const venta = await saleFrom(row.from);
      const before = await stock();
      const storedBefore = await storedSale(venta.id);
      const movimientos = (await ledgerOf(stack, mouse(), principal())).movimientos;

      const { status, body } = await putSale(venta.id, row.body());
      expect(status).toBe(row.status);
      expect(await stock()).toBe(before + row.stock);
      const after = await getSale(venta.id);
      const [total, sub_total, iva] = MOUSE[row.cantidad]!;
      expect(after).toMatchObject({ estado: row.estado, total, sub_total, iva, correlativo: venta.correlativo, ...row.extra });
      expect(after.detalles.map((l: any) => l.cantidad)).toEqual([row.cantidad]);
      // The ledger agrees with the stock: one movement when stock moved, none otherwise.
      expect(await ledgerOf(stack, mouse(), principal())).toEqual({
        stock: (before + row.stock).toFixed(3),
        movimientos: movimientos + (row.stock === 0 ? 0 : 1),
      });
      if (row.status === 200) {
        expect(body.data).toEqual(after);
        expect(body.meta).toEqual({ empresa: 'Ventas A', timestamp: expect.any(String), filters_applied: {} });
      } else {
        expect(body).toMatchObject({ success: false, code: 422, error: expect.any(String) });
        expect(Object.keys(body.details)).toContain(row.field);
        expect(await storedSale(venta.id)).toEqual(storedBefore);
      }
    });

    it('names the reason of each refusal', async () => {
      const annulled = await annul(a.id, (await pendiente(1)).id);
      expect((await putSale(annulled.id, { observaciones: 'x' })).body.error).toBe('La venta está anulada y no se puede modificar');
      const completed = await create({ detalles: [{ id_producto: mouse(), cantidad: 1 }] });
      expect((await putSale(completed.id, { observaciones: 'x' })).body.error).toBe(
        'La venta está en estado Completada: solo se pueden modificar ventas en estado Pendiente o Cotizacion',
      );
      const fiscal = await stack.admin.request(
        salesAdminSubjects,
        'sales.admin.fiscal-emitted',
        { empresa_id: a.id, id_venta: (await cotizacion(1)).id },
        { requestId: 'test-fiscal' },
      );
      expect((await putSale(fiscal.id, { observaciones: 'x' })).body.error).toBe(
        'La venta tiene un documento fiscal emitido y no se puede modificar',
      );
    });
  });

  describe('what is kept and what is recomputed', () => {
    it('keeps every omitted field and moves no stock when only a text changes', async () => {
      const venta = await pendiente(2, { observaciones: 'Llamar antes', forma_pago: 'Crédito', fecha_expiracion: '2026-04-01' });
      const movimientos = (await ledgerOf(stack, mouse(), principal())).movimientos;
      const { status, body } = await putSale(venta.id, { observaciones: 'Entregar el lunes' });
      expect(status).toBe(200);
      const { updated_at: _u, observaciones: _o, ...kept } = venta;
      expect(body.data).toMatchObject({
        ...kept,
        detalles: venta.detalles.map(({ updated_at: _lu, ...l }: any) => l),
        observaciones: 'Entregar el lunes',
      });
      expect(new Date(body.data.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(venta.updated_at).getTime());
      expect((await ledgerOf(stack, mouse(), principal())).movimientos).toBe(movimientos);
    });

    it('clears the fields sent as null', async () => {
      const venta = await cotizacion(1, { id_cliente: a.clientes.juan, observaciones: 'Algo', fecha_expiracion: '2026-04-01' });
      const { body } = await putSale(venta.id, { id_cliente: null, observaciones: null, fecha_expiracion: null, forma_pago: null });
      expect(body.data).toMatchObject({
        id_cliente: null,
        nombre_cliente: 'Consumidor Final',
        observaciones: null,
        fecha_expiracion: null,
        forma_pago: null,
      });
    });

    it('replaces the lines: one updated in place, one added, the others removed; totals, tax and the sale document recomputed', async () => {
      const venta = await pendiente(2, {
        detalles: [
          { id_producto: mouse(), cantidad: 2 },
          { id_producto: a.productos.laptop, cantidad: 1 },
          { id_producto: a.productos.libro, cantidad: 4 },
        ],
      });
      const [mouseLine, laptopLine, libroLine] = venta.detalles;
      const laptop = a.productos.laptop!;
      const libro = a.productos.libro!;
      const cemento = a.productos.cemento!;
      const before = { mouse: await stock(), laptop: await stock(laptop), libro: await stock(libro), cemento: await stock(cemento) };

      const { status, body } = await putSale(venta.id, {
        detalles: [
          { id: mouseLine.id, cantidad: 5, descuento: 1.75 },
          { id_producto: cemento, cantidad: 2.5 },
        ],
      });
      expect(status).toBe(200);
      const [updated, added] = body.data.detalles;
      expect(body.data.detalles).toHaveLength(2);
      expect(updated).toMatchObject({
        id: mouseLine.id,
        id_producto: mouse(),
        cantidad: 5,
        precio: 19.95,
        descuento: 1.75,
        total: 98,
        sub_total: 86.73,
        iva: 11.27,
        created_at: mouseLine.created_at,
      });
      expect(added).toMatchObject({
        id_producto: cemento,
        cantidad: 2.5,
        total: 24.63,
        sub_total: 23.46,
        iva: 1.17,
        porcentaje_impuesto: 5,
      });
      expect([mouseLine.id, laptopLine.id, libroLine.id]).not.toContain(added.id);
      expect(body.data).toMatchObject({
        total: 122.63,
        sub_total: 110.19,
        iva: 12.44,
        descuento: 1.75,
        saldo: 122.63,
        correlativo: venta.correlativo,
      });
      expect(
        await stack.query('select count(*)::int as n from sales.venta_detalles where id = any($1)', [[laptopLine.id, libroLine.id]]),
      ).toEqual([{ n: 0 }]);

      // Stock by difference, per product: +3 taken, laptop and books back, cement taken.
      expect({ mouse: await stock(), laptop: await stock(laptop), libro: await stock(libro), cemento: await stock(cemento) }).toEqual({
        mouse: before.mouse - 3,
        laptop: before.laptop + 1,
        libro: before.libro + 4,
        cemento: before.cemento - 2.5,
      });
      // One adjustment under the sale's first stock revision, a movement per product that changed.
      const moves = await stack.query(
        'select producto_id, cantidad::text from inventory.movimientos where clave = $1 order by producto_id',
        [`venta-${venta.id}-rev-1`],
      );
      expect(moves).toHaveLength(4);

      // The sale document is issued again with the same correlative.
      const [row] = await stack.query('select documento from sales.ventas where id = $1', [venta.id]);
      expect(row!.documento).toMatchObject({
        documento: { correlativo: venta.correlativo },
        actualizado_en: expect.any(String),
        totales: { total: '122.63', sub_total: '110.19', iva: '12.44' },
        lineas: [
          expect.objectContaining({ codigo: 'MOU-01', cantidad: '5', total: '98.00' }),
          expect.objectContaining({ codigo: 'CEM-42', cantidad: '2.5' }),
        ],
      });
    });

    it('keeps a line’s own price when it is updated without one, and prices a new line at the product’s', async () => {
      const venta = await pendiente(2, { detalles: [{ id_producto: mouse(), cantidad: 2, precio: 15 }] });
      const { body } = await putSale(venta.id, {
        detalles: [
          { id: venta.detalles[0].id, cantidad: 3 },
          { codigo_producto: 'MOU-01', cantidad: 1 },
        ],
      });
      expect(body.data.detalles.map((l: any) => [l.cantidad, l.precio, l.total])).toEqual([
        [3, 15, 45],
        [1, 19.95, 19.95],
      ]);
    });

    it('moves the whole quantity between warehouses when the warehouse changes', async () => {
      const venta = await pendiente(4);
      const reserva = a.bodegas.reserva!;
      const before = { principal: await stock(), reserva: await stock(mouse(), reserva) };
      const { status } = await putSale(venta.id, { id_bodega: reserva });
      expect(status).toBe(200);
      expect({ principal: await stock(), reserva: await stock(mouse(), reserva) }).toEqual({
        principal: before.principal + 4,
        reserva: before.reserva - 4,
      });
      // Read your writes: GET /inventory already shows both.
      const product = await json(await stack.api(`${API}/inventory/${mouse()}`, { key: SALES_KEY_A }));
      expect(product.data.inventarios.find((i: any) => i.id_bodega === reserva).stock).toBe(before.reserva - 4);
    });

    it('never changes the correlative, also when the sale moves to another document type', async () => {
      await create({ detalles: [{ id_producto: mouse(), cantidad: 1 }] }); // FAC-n exists, so numbers collide across types
      const quote = await cotizacion(1, { id_documento: a.documentos.cotizacion });
      expect(quote.correlativo).toMatch(/^COT-\d+$/);
      const { status, body } = await putSale(quote.id, {
        estado: 'Completada',
        id_documento: a.documentos.factura,
        id_canal: a.canales.tienda,
      });
      expect(status).toBe(200);
      expect(body.data).toMatchObject({
        correlativo: quote.correlativo,
        id_documento: a.documentos.factura,
        nombre_documento: 'Factura',
        estado: 'Completada',
      });
      // Neither counter moved.
      const next = await create({ detalles: [{ id_producto: mouse(), cantidad: 1 }] });
      const nextQuote = await cotizacion(1, { id_documento: a.documentos.cotizacion });
      expect(Number(nextQuote.correlativo.slice(4))).toBe(Number(quote.correlativo.slice(4)) + 1);
      expect(next.correlativo).toMatch(/^FAC-\d+$/);
    });

    it('refuses a quotation-only document type for a sale', async () => {
      const quote = await cotizacion(1, { id_documento: a.documentos.cotizacion });
      const { status, body } = await putSale(quote.id, { estado: 'Completada', id_canal: a.canales.tienda });
      expect(status).toBe(422);
      expect(body.details.id_documento).toEqual(['El tipo de documento "Cotización" solo se usa para cotizaciones']);
    });
  });

  describe('credit and stock limits', () => {
    it('moves a quotation to Pendiente only within the customer’s credit limit, naming the amounts', async () => {
      const quote = await cotizacion(1, { detalles: [{ id_producto: a.productos.laptop, cantidad: 2 }] });
      const refused = await putSale(quote.id, { estado: 'Pendiente', id_canal: a.canales.tienda, id_cliente: a.clientes.juan });
      expect(refused.status).toBe(422);
      expect(refused.body.details.id_cliente[0]).toMatch(
        /límite de crédito del cliente "Juan Pérez": límite 1000\.00, saldo pendiente \d+\.\d\d, esta venta 1299\.98/,
      );
      const allowed = await putSale(quote.id, {
        estado: 'Pendiente',
        id_canal: a.canales.tienda,
        id_cliente: a.clientes.juan,
        monto_pago: 900,
      });
      expect(allowed.status).toBe(200);
      expect(allowed.body.data).toMatchObject({ estado: 'Pendiente', saldo: 399.98, monto_pago: 900 });
      // Its own debt does not count twice when the pending sale is edited again.
      const again = await putSale(quote.id, { observaciones: 'sin cambios de monto' });
      expect(again.status).toBe(200);
    });

    it('refuses taking more than there is when the company forbids selling without stock, and changes nothing', async () => {
      const venta = await create(
        { estado: 'Pendiente', id_cliente: d.clientes.libre, detalles: [{ id_producto: d.productos.cemento, cantidad: 10 }] },
        SALES_KEY_STRICT,
        d,
      );
      const before = await dataSnapshot(stack);
      const stored = await storedSale(venta.id);
      const { status, body } = await putSale(venta.id, { detalles: [{ id: venta.detalles[0].id, cantidad: 100.5 }] }, SALES_KEY_STRICT);
      expect(status).toBe(422);
      expect(body.details).toEqual({
        'detalles.0.cantidad': ['Stock insuficiente para el producto CEM-42: disponible 90, solicitado 90.5'],
      });
      expect(await dataSnapshot(stack)).toEqual(before);
      expect(await storedSale(venta.id)).toEqual(stored);
      // Up to what there is: fine.
      expect((await putSale(venta.id, { detalles: [{ id: venta.detalles[0].id, cantidad: 100 }] }, SALES_KEY_STRICT)).status).toBe(200);
      expect(await stockOf(stack, d.productos.cemento!, d.bodegas.principal!)).toBe('0.000');
    });
  });

  describe('every refusal leaves the sale and the stock untouched', () => {
    const long = (n: number) => 'x'.repeat(n);
    const cases: Array<[string, (venta: any) => unknown, string]> = [
      ['estado not accepted on update', () => ({ estado: 'Anulada' }), 'estado'],
      ['fecha that does not exist', () => ({ fecha: '2026-02-30' }), 'fecha'],
      ['fecha_expiracion before fecha', () => ({ fecha: '2026-03-10', fecha_expiracion: '2026-03-01' }), 'fecha_expiracion'],
      ['warehouse of another company', () => ({ id_bodega: b.bodegas.principal }), 'id_bodega'],
      ['warehouse of another branch', () => ({ id_bodega: a.bodegas.norte }), 'id_bodega'],
      ['branch name unknown', () => ({ sucursal: 'Sucursal Sur' }), 'sucursal'],
      ['document type inactive', () => ({ id_documento: a.documentos.inactivo }), 'id_documento'],
      ['document type of another company', () => ({ id_documento: b.documentos.factura }), 'id_documento'],
      ['channel unknown', () => ({ id_canal: b.canales.tienda }), 'id_canal'],
      ['customer of another company', () => ({ id_cliente: b.clientes.juan }), 'id_cliente'],
      ['Pendiente without its customer', () => ({ id_cliente: null }), 'id_cliente'],
      ['cotizacion true on a sale', () => ({ cotizacion: true }), 'cotizacion'],
      ['observaciones over 1000 characters', () => ({ observaciones: long(1001) }), 'observaciones'],
      ['monto_pago negative', () => ({ monto_pago: -1 }), 'monto_pago'],
      ['detalles empty', () => ({ detalles: [] }), 'detalles'],
      [
        'more than 100 lines',
        (v) => ({ detalles: Array.from({ length: 101 }, () => ({ id_producto: v.detalles[0].id_producto, cantidad: 1 })) }),
        'detalles',
      ],
      ['cantidad 0', (v) => ({ detalles: [{ id: v.detalles[0].id, cantidad: 0 }] }), 'detalles.0.cantidad'],
      ['a new line without product', () => ({ detalles: [{ cantidad: 1 }] }), 'detalles.0.id_producto'],
      [
        'the same line twice',
        (v) => ({
          detalles: [
            { id: v.detalles[0].id, cantidad: 1 },
            { id: v.detalles[0].id, cantidad: 2 },
          ],
        }),
        'detalles.1.id',
      ],
      ['descuento above the line', (v) => ({ detalles: [{ id: v.detalles[0].id, cantidad: 1, descuento: 50 }] }), 'detalles.0.descuento'],
      ['unknown product', () => ({ detalles: [{ id_producto: 999999, cantidad: 1 }] }), 'detalles.0.id_producto'],
      ['inactive product', () => ({ detalles: [{ id_producto: a.productos.viejo, cantidad: 1 }] }), 'detalles.0.id_producto'],
      ['body not an object', () => [1, 2], '_'],
    ];

    it.each(cases)('%s', async (_name, body, field) => {
      const venta = await pendiente(2);
      const before = await dataSnapshot(stack);
      const stored = await storedSale(venta.id);
      const res = await putSale(venta.id, body(venta));
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ success: false, code: 422, error: expect.any(String) });
      expect(Object.keys(res.body.details)).toContain(field);
      expect(await dataSnapshot(stack)).toEqual(before);
      expect(await storedSale(venta.id)).toEqual(stored);
    });

    it('refuses the id of a line of another sale, or of another company’s sale, as not a line of this sale', async () => {
      const venta = await pendiente(2);
      const other = await pendiente(1);
      const foreign = await create({ detalles: [{ id_producto: b.productos.mouse, cantidad: 1 }] }, SALES_KEY_B, b);
      const before = await dataSnapshot(stack);
      const stored = { venta: await storedSale(venta.id), other: await storedSale(other.id), foreign: await storedSale(foreign.id) };
      for (const id of [other.detalles[0].id, foreign.detalles[0].id]) {
        const res = await putSale(venta.id, { detalles: [{ id, id_producto: mouse(), cantidad: 7 }] });
        expect(res.status).toBe(422);
        expect(res.body.details).toEqual({ 'detalles.0.id': [`La línea ${id} no pertenece a esta venta`] });
      }
      expect(await dataSnapshot(stack)).toEqual(before);
      expect({ venta: await storedSale(venta.id), other: await storedSale(other.id), foreign: await storedSale(foreign.id) }).toEqual(
        stored,
      );
    });

    it('answers 404 for an unknown id and for another company’s sale, 400 for an id that is not an integer', async () => {
      const foreign = await create(
        { estado: 'Pendiente', id_cliente: b.clientes.libre, detalles: [{ id_producto: b.productos.mouse, cantidad: 1 }] },
        SALES_KEY_B,
        b,
      );
      const before = await dataSnapshot(stack);
      for (const id of [999999, foreign.id]) {
        const res = await putSale(id, { observaciones: 'x' });
        expect(res).toMatchObject({
          status: 404,
          body: { success: false, code: 404, reason: 'venta_no_encontrada', error: 'Venta no encontrada' },
        });
      }
      for (const id of ['abc', '1.5', '0']) {
        const res = await putSale(id, { observaciones: 'x' });
        expect(res.status).toBe(400);
        expect(res.body.details).toHaveProperty('id');
      }
      expect(await dataSnapshot(stack)).toEqual(before);
      expect((await getSale(foreign.id, SALES_KEY_B)).observaciones).toBeNull();
    });

    it('answers 400 for unparsable JSON and 415 for another content type', async () => {
      const venta = await pendiente(1);
      expect((await putSale(venta.id, null, SALES_KEY_A, '{"observaciones": ')).status).toBe(400);
      const text = await stack.api(`${API}/sales/${venta.id}`, {
        key: SALES_KEY_A,
        method: 'PUT',
        headers: { 'Content-Type': 'text/plain' },
        body: 'hola',
      });
      expect(text.status).toBe(415);
    });
  });

  describe('concurrency', () => {
    it('serialises concurrent PUTs on one sale: no lost update, and the stock is what the final lines imply', async () => {
      const venta = await pendiente(5);
      const base = (await stock()) + 5; // before the sale took its 5
      const lineId = venta.detalles[0].id;
      const quantities = [1, 9, 4, 7, 2, 8, 3, 6, 10, 5];
      const replies = await Promise.all([
        ...quantities.map((cantidad) => putSale(venta.id, { detalles: [{ id: lineId, cantidad }] })),
        putSale(venta.id, { observaciones: 'Nadie pisa esto' }),
      ]);
      expect(replies.map((r) => r.status)).toEqual(quantities.map(() => 200).concat(200));
      const final = await getSale(venta.id);
      expect(final.observaciones).toBe('Nadie pisa esto');
      expect(final.detalles).toHaveLength(1);
      expect(final.detalles[0].id).toBe(lineId);
      expect(await stock()).toBe(base - final.detalles[0].cantidad);
      expect(await ledgerOf(stack, mouse(), principal())).toMatchObject({ stock: (base - final.detalles[0].cantidad).toFixed(3) });
      // One adjustment per PUT that changed the quantity, under consecutive revisions.
      const { revision_stock } = (
        await stack.query<{ revision_stock: number }>('select revision_stock from sales.ventas where id = $1', [venta.id])
      )[0]!;
      const keys = await stack.query<{ clave: string }>(
        'select distinct clave from inventory.movimientos where clave like $1 order by clave',
        [`venta-${venta.id}-rev-%`],
      );
      expect(keys).toHaveLength(revision_stock);
      expect(revision_stock).toBeGreaterThanOrEqual(9);
    });

    it('ends an update racing an annulment in one consistent state: annulled, with all its stock back once', async () => {
      for (let round = 0; round < 4; round++) {
        const before = await stock();
        const venta = await pendiente(5);
        const [update] = await Promise.all([
          putSale(venta.id, { detalles: [{ id: venta.detalles[0].id, cantidad: 8 }] }),
          annul(a.id, venta.id),
        ]);
        expect([200, 422]).toContain(update.status);
        expect((await getSale(venta.id)).estado).toBe('Anulada');
        expect(await stock()).toBe(before);
        expect(await ledgerOf(stack, mouse(), principal())).toMatchObject({ stock: before.toFixed(3) });
      }
    });
  });

  describe('a change whose transaction dies after inventory applied it', () => {
    // The sale's row write fails after the adjustment answered, as a crash before the commit would.
    const failOn = (marker: string) =>
      stack.query(`create or replace function sales.fail_marked_update() returns trigger language plpgsql as $$
        begin if new.observaciones = '${marker}' then raise exception 'injected failure'; end if; return new; end $$;
        drop trigger if exists fail_marked_update on sales.ventas;
        create trigger fail_marked_update before update on sales.ventas for each row execute function sales.fail_marked_update()`);
    afterAll(() => stack.query('drop trigger if exists fail_marked_update on sales.ventas'));

    it('is moved once when the client retries it, and squared by a different change after it', async () => {
      await failOn('falla');
      const venta = await pendiente(5);
      const base = (await stock()) + 5;
      const lineId = venta.detalles[0].id;

      // 5 → 2 fails after inventory returned 3 under revision 1: the sale still says 5.
      const failed = await putSale(venta.id, { observaciones: 'falla', detalles: [{ id: lineId, cantidad: 2 }] });
      expect(failed.status).toBe(500);
      expect((await getSale(venta.id)).detalles[0].cantidad).toBe(5);
      expect(await stock()).toBe(base - 2);

      // A different change (5 → 7) claims revision 1 again, finds it applied, sends the rest under 2.
      const different = await putSale(venta.id, { detalles: [{ id: lineId, cantidad: 7 }] });
      expect(different.status).toBe(200);
      expect(await stock()).toBe(base - 7);

      // Another failure (7 → 1), then the client's retry of that same change with the marker gone.
      const failedAgain = await putSale(venta.id, { observaciones: 'falla', detalles: [{ id: lineId, cantidad: 1 }] });
      expect(failedAgain.status).toBe(500);
      expect(await stock()).toBe(base - 1);
      const retried = await putSale(venta.id, { observaciones: 'reintento', detalles: [{ id: lineId, cantidad: 1 }] });
      expect(retried.status).toBe(200);
      expect(await stock()).toBe(base - 1);
      expect(await ledgerOf(stack, mouse(), principal())).toMatchObject({ stock: (base - 1).toFixed(3) });

      const moves = await stack.query<{ clave: string; cantidad: string }>(
        'select clave, cantidad::text from inventory.movimientos where clave like $1 order by id',
        [`venta-${venta.id}-rev-%`],
      );
      expect(moves).toEqual([
        { clave: `venta-${venta.id}-rev-1`, cantidad: '3.000' },
        { clave: `venta-${venta.id}-rev-2`, cantidad: '-5.000' },
        { clave: `venta-${venta.id}-rev-3`, cantidad: '6.000' },
      ]);
      expect((await stack.query('select revision_stock from sales.ventas where id = $1', [venta.id]))[0]).toEqual({ revision_stock: 3 });

      // The annulment continues the same sequence and gives back exactly what the sale holds.
      await annul(a.id, venta.id);
      expect(await stock()).toBe(base);
    });
  });

  describe('a sales crash between the adjustment and the commit', () => {
    it('leaves the sale as it was; the client’s retry after the restart moves nothing more', async () => {
      const venta = await pendiente(5);
      const base = (await stock()) + 5;
      await stack.stopService('sales');
      const sales = await spawnService('sales', stackEnv(stack.iso, { SALES_FAULT_INJECTION: 'exit-after-update-adjust' }));
      try {
        const body = { detalles: [{ id: venta.detalles[0].id, cantidad: 2 }] };
        const crashed = await putSale(venta.id, body);
        expect([503, 504]).toContain(crashed.status);
        await sales.exit;
        expect(sales.child.signalCode).toBe('SIGKILL');
        // Inventory gave 3 back under revision 1; the sale never recorded it.
        expect(await stock()).toBe(base - 2);
        expect((await stack.query('select revision_stock from sales.ventas where id = $1', [venta.id]))[0]).toEqual({ revision_stock: 0 });

        await stack.startService('sales');
        const retried = await putSale(venta.id, body);
        expect(retried.status).toBe(200);
        expect(retried.body.data.detalles[0].cantidad).toBe(2);
        expect(await stock()).toBe(base - 2);
        expect(
          await stack.query('select clave, cantidad::text from inventory.movimientos where clave like $1', [`venta-${venta.id}-rev-%`]),
        ).toEqual([{ clave: `venta-${venta.id}-rev-1`, cantidad: '3.000' }]);
      } finally {
        if (sales.child.exitCode === null && sales.child.signalCode === null) await sales.stop();
        if (!stack.running.has('sales')) await stack.startService('sales');
      }
    });

    it('with no later change, the revision sweeper reverts what the dead change moved, and the next change moves past it', async () => {
      const venta = await pendiente(5);
      const base = (await stock()) + 5;
      await stack.stopService('sales');
      const crashing = await spawnService('sales', stackEnv(stack.iso, { SALES_FAULT_INJECTION: 'exit-after-update-adjust' }));
      const sweeping = () =>
        spawnService('sales', stackEnv(stack.iso, { REVISION_SWEEP_INTERVAL_MS: '200', REVISION_SQUARE_AFTER_MS: '1000' }));
      let sales = crashing;
      try {
        const crashed = await putSale(venta.id, { detalles: [{ id: venta.detalles[0].id, cantidad: 2 }] });
        expect([503, 504]).toContain(crashed.status);
        await crashing.exit;
        expect(await stock()).toBe(base - 2);

        sales = await sweeping();
        // The sale still holds 5: the 3 inventory gave back for the dead change are taken again.
        await eventually(async () => {
          expect(await stock()).toBe(base - 5);
          // Squared: the dead change's record goes with the sweep that squared its sale.
          expect(await stack.query('select count(*)::int as n from sales.cambios_en_curso where venta_id = $1', [venta.id])).toEqual([
            { n: 0 },
          ]);
        }, 20_000);
        expect(
          await stack.query('select clave, cantidad::text from inventory.movimientos where clave like $1 order by id', [
            `venta-${venta.id}-rev-%`,
          ]),
        ).toEqual([
          { clave: `venta-${venta.id}-rev-1`, cantidad: '3.000' },
          { clave: `venta-${venta.id}-rev-1:revertido`, cantidad: '-3.000' },
        ]);

        // Revision 1 is spent (reverted) and so is 2 (the first key inventory never saw, in case its adjustment was on its
        // way): the next change claims them, finds nothing moved under either, and moves under 3.
        const updated = await putSale(venta.id, { detalles: [{ id: venta.detalles[0].id, cantidad: 4 }] });
        expect(updated.status).toBe(200);
        expect(await stock()).toBe(base - 4);
        expect((await stack.query('select revision_stock from sales.ventas where id = $1', [venta.id]))[0]).toEqual({ revision_stock: 3 });
      } finally {
        if (sales.child.exitCode === null && sales.child.signalCode === null) await sales.stop();
        if (!stack.running.has('sales')) await stack.startService('sales');
      }
    });

    it('a quotation whose conversion crashed after taking its stock, then annulled, gets that stock back', async () => {
      const venta = await cotizacion(5);
      const base = await stock();
      await stack.stopService('sales');
      const sales = await spawnService('sales', stackEnv(stack.iso, { SALES_FAULT_INJECTION: 'exit-after-update-adjust' }));
      try {
        const crashed = await putSale(venta.id, { estado: 'Completada', id_canal: a.canales.tienda });
        expect([503, 504]).toContain(crashed.status);
        await sales.exit;
        expect(sales.child.signalCode).toBe('SIGKILL');
        // Inventory took 5 under revision 1 for a conversion the quotation never recorded.
        expect(await stock()).toBe(base - 5);
        await stack.startService('sales');

        // The quotation holds nothing, yet its annulment claims revision 1, finds those 5 and gives them back.
        expect(await annul(a.id, venta.id)).toMatchObject({ estado: 'Anulada' });
        expect(await stock()).toBe(base);
        expect(
          await stack.query('select clave, cantidad::text from inventory.movimientos where clave like $1 order by id', [
            `venta-${venta.id}-rev-%`,
          ]),
        ).toEqual([
          { clave: `venta-${venta.id}-rev-1`, cantidad: '-5.000' },
          { clave: `venta-${venta.id}-rev-2`, cantidad: '5.000' },
        ]);
        expect((await stack.query('select revision_stock from sales.ventas where id = $1', [venta.id]))[0]).toEqual({ revision_stock: 2 });
        await annul(a.id, venta.id);
        expect(await stock()).toBe(base);
      } finally {
        if (sales.child.exitCode === null && sales.child.signalCode === null) await sales.stop();
        if (!stack.running.has('sales')) await stack.startService('sales');
      }
    });
  });
});
