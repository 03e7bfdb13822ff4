import type { SeedOutput } from '@erp/back-office';
import { salesAdminSubjects } from '@erp/contracts';
import { Stack, json } from '../support/stack';
import { eventually } from '@erp/testing';
import {
  API,
  SALES_KEY_A,
  SALES_KEY_NOUSER,
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

describe('POST /sales: the invoicing pipeline through the gateway, sales and inventory', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;
  let b: SalesRefs;
  let d: SalesRefs;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'] });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
    b = refsOf(seeded, 'b');
    d = refsOf(seeded, 'd');
  });
  afterAll(() => stack.stop());

  describe('a sale', () => {
    it('stores Pagada as Completada with monto_pago = total, takes its stock before answering and issues the next correlative', async () => {
      const laptop = a.productos.laptop!;
      const principal = a.bodegas.principal!;
      const before = Number(await stockOf(stack, laptop, principal));
      const { status, body } = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { estado: 'Pagada', detalles: [{ id_producto: laptop, cantidad: 2 }] }),
      );
      expect(status).toBe(201);
      expect(body.meta).toEqual({ empresa: 'Ventas A', timestamp: expect.any(String), filters_applied: {}, idempotent: false });
      expect(body.data).toMatchObject({
        estado: 'Completada',
        cotizacion: false,
        correlativo: 'FAC-1',
        forma_pago: 'Efectivo',
        total: 1299.98,
        sub_total: 1150.42,
        iva: 149.56,
        monto_pago: 1299.98,
        cambio: 0,
        saldo: 0,
        nombre_cliente: 'Consumidor Final',
        nombre_usuario: 'Admin A',
        fecha: '2026-03-10',
        id_documento: a.documentos.factura,
      });
      expect(body.data.detalles).toEqual([
        expect.objectContaining({
          id: expect.any(Number),
          id_producto: laptop,
          codigo: 'LAP-14',
          cantidad: 2,
          precio: 649.99,
          total: 1299.98,
          sub_total: 1150.42,
          iva: 149.56,
          porcentaje_impuesto: 13,
        }),
      ]);
      expect(body.data.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

      // Read-your-writes: the stock is already down in GET /inventory.
      const product = await json(await stack.api(`${API}/inventory/${laptop}`, { key: SALES_KEY_A }));
      expect(product.data.inventarios.find((i: { id_bodega: number }) => i.id_bodega === principal).stock).toBe(before - 2);
      expect(await ledgerOf(stack, laptop, principal)).toMatchObject({ stock: (before - 2).toFixed(3) });

      const detail = await json(await stack.api(`${API}/sales/${body.data.id}`, { key: SALES_KEY_A }));
      expect(detail.data).toEqual(body.data);

      // The outbox event reaches inventory, which confirms the reservation.
      const [venta] = await stack.query('select clave_reserva, documento from sales.ventas where id = $1', [body.data.id]);
      await eventually(async () => {
        const [reserva] = await stack.query('select estado from inventory.reservas where clave = $1', [venta!.clave_reserva]);
        expect(reserva!.estado).toBe('confirmada');
      });
      // The sale document: a snapshot of the sale as issued.
      expect(venta!.documento).toMatchObject({
        documento: { nombre: 'Factura', correlativo: 'FAC-1', numero: 1 },
        empresa: { nombre: 'Ventas A' },
        cliente: { nombre: 'Consumidor Final' },
        usuario: { nombre: 'Admin A' },
        totales: { total: '1299.98', sub_total: '1150.42', iva: '149.56' },
        lineas: [expect.objectContaining({ codigo: 'LAP-14', cantidad: '2', total: '1299.98' })],
      });
    });

    it('answers 201 with Location pointing at the new sale, and 200 without it for the same reference', async () => {
      const send = () =>
        stack.api(`${API}/sales`, {
          key: SALES_KEY_A,
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(saleBody(a, { referencia_externa: 'location-1' })),
        });
      const created = await send();
      expect(created.status).toBe(201);
      const id = (await json(created)).data.id;
      expect(created.headers.get('location')).toBe(`${API}/sales/${id}`);
      const located = await stack.api(created.headers.get('location')!, { key: SALES_KEY_A });
      expect((await json(located)).data.id).toBe(id);
      const again = await send();
      expect(again.status).toBe(200);
      expect(again.headers.get('location')).toBeNull();
    });

    it('computes tax exactly per line: company, product and line rates, exempt lines, discounts and fractional quantities', async () => {
      const { status, body } = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, {
          detalles: [
            { id_producto: a.productos.laptop, cantidad: 1 },
            { id_producto: a.productos.libro, cantidad: 4 },
            { id_producto: a.productos.cemento, cantidad: 2.5 },
            { codigo_producto: 'MOU-01', cantidad: 2, precio: 19.95, descuento: 1.9 },
            { id_producto: a.productos.mouse, cantidad: 1, porcentaje_impuesto: 0 },
            { codigo_producto: '7401000000014', cantidad: 0.5, precio: 0.03, porcentaje_impuesto: 100 },
          ],
        }),
      );
      expect(status).toBe(201);
      const pick = (l: Record<string, number>) => [l.total, l.sub_total, l.iva, l.exenta, l.porcentaje_impuesto];
      expect(body.data.detalles.map(pick)).toEqual([
        [649.99, 575.21, 74.78, 0, 13],
        [48, 48, 0, 48, 0],
        [24.63, 23.46, 1.17, 0, 5],
        [38, 33.63, 4.37, 0, 13],
        [19.95, 19.95, 0, 19.95, 0],
        [0.02, 0.01, 0.01, 0, 100],
      ]);
      expect(body.data).toMatchObject({ total: 780.59, sub_total: 700.26, iva: 80.33, exenta: 67.95, descuento: 1.9 });
      const [row] = await stack.query(
        'select total = sub_total + iva as whole, (select bool_and(total = sub_total + iva) from sales.venta_detalles where venta_id = $1) as lines from sales.ventas where id = $1',
        [body.data.id],
      );
      expect(row).toEqual({ whole: true, lines: true });
    });

    it('creates a quotation without channel or stock, on a quotation-only document type', async () => {
      const laptop = a.productos.laptop!;
      const before = await stockOf(stack, laptop, a.bodegas.principal!);
      const { status, body } = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { estado: 'Cotizacion', id_canal: undefined, id_documento: a.documentos.cotizacion, fecha_expiracion: '2026-04-10' }),
      );
      expect(status).toBe(201);
      expect(body.data).toMatchObject({
        estado: 'Cotizacion',
        cotizacion: true,
        correlativo: 'COT-1',
        id_canal: null,
        fecha_expiracion: '2026-04-10',
      });
      expect(await stockOf(stack, laptop, a.bodegas.principal!)).toBe(before);
      const [venta] = await stack.query('select clave_reserva from sales.ventas where id = $1', [body.data.id]);
      expect(venta!.clave_reserva).toBeNull();
    });

    it('creates a pending sale for a customer, owing its total, and takes its stock; services never move stock', async () => {
      const mouse = a.productos.mouse!;
      const before = Number(await stockOf(stack, mouse, a.bodegas.principal!));
      const movimientos = (await stack.query('select count(*)::int as n from inventory.movimientos'))[0]!.n;
      const { status, body } = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, {
          estado: 'Pendiente',
          id_cliente: a.clientes.juan,
          sucursal: '  sucursal CENTRO ',
          id_sucursal: undefined,
          id_documento: a.documentos.ticket,
          detalles: [
            { id_producto: mouse, cantidad: 3 },
            { id_producto: a.productos.instalacion, cantidad: 1 },
          ],
        }),
      );
      expect(status).toBe(201);
      expect(body.data).toMatchObject({
        estado: 'Pendiente',
        nombre_cliente: 'Juan Pérez',
        id_cliente: a.clientes.juan,
        saldo: 84.85,
        total: 84.85,
        correlativo: '1000',
        id_sucursal: a.sucursales.centro,
      });
      expect(Number(await stockOf(stack, mouse, a.bodegas.principal!))).toBe(before - 3);
      expect((await stack.query('select count(*)::int as n from inventory.movimientos'))[0]!.n).toBe(movimientos + 1);
    });
  });

  describe('idempotency on referencia_externa', () => {
    it('answers 10 concurrent POSTs with one new reference with one 201 and nine 200 of the same sale, moving stock once', async () => {
      const mouse = a.productos.mouse!;
      const principal = a.bodegas.principal!;
      const before = Number(await stockOf(stack, mouse, principal));
      const movimientos = (await ledgerOf(stack, mouse, principal)).movimientos;
      const body = saleBody(a, { referencia_externa: 'WEB-1001', detalles: [{ id_producto: mouse, cantidad: 2 }] });
      const replies = await Promise.all(Array.from({ length: 10 }, () => postSale(stack, SALES_KEY_A, body)));
      expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(replies.map((r) => r.body.data.id)).size).toBe(1);
      expect(replies.filter((r) => r.body.meta.idempotent === true)).toHaveLength(9);
      expect(Number(await stockOf(stack, mouse, principal))).toBe(before - 2);
      expect((await ledgerOf(stack, mouse, principal)).movimientos).toBe(movimientos + 1);
      expect(await stack.query("select count(*)::int as n from sales.ventas where referencia_externa = 'WEB-1001'")).toEqual([{ n: 1 }]);

      // The alias `referencia`, with the body's keys in another order, is the same request.
      const { referencia_externa, ...rest } = body;
      const retry = await postSale(
        stack,
        SALES_KEY_A,
        Object.fromEntries(Object.entries({ ...rest, referencia: referencia_externa }).reverse()),
      );
      expect(retry.status).toBe(200);
      expect(retry.body.data.id).toBe(replies[0]!.body.data.id);
      expect(retry.body.meta.idempotent).toBe(true);
    });

    it('refuses the reference sent again with another body with 409 naming the existing sale, and writes nothing', async () => {
      const mouse = a.productos.mouse!;
      const first = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { referencia_externa: 'WEB-2002', detalles: [{ id_producto: mouse, cantidad: 1 }] }),
      );
      expect(first.status).toBe(201);
      const before = await dataSnapshot(stack);
      const other = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { referencia_externa: 'WEB-2002', detalles: [{ id_producto: mouse, cantidad: 5 }] }),
      );
      const message = `La referencia_externa WEB-2002 ya se usó en la venta ${first.body.data.id} (${first.body.data.correlativo}) con otro contenido`;
      expect(other).toEqual({
        status: 409,
        body: {
          success: false,
          error: message,
          code: 409,
          reason: 'referencia_en_conflicto',
          details: { referencia_externa: [message], id_venta: [String(first.body.data.id)], correlativo: [first.body.data.correlativo] },
        },
      });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('answers any retry of a sale stored before fingerprints were kept with that sale, as before', async () => {
      const mouse = a.productos.mouse!;
      const first = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { referencia_externa: 'WEB-3003', detalles: [{ id_producto: mouse, cantidad: 1 }] }),
      );
      await stack.query("update sales.ventas set huella = null where referencia_externa = 'WEB-3003'");
      const retry = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { referencia_externa: 'WEB-3003', detalles: [{ id_producto: mouse, cantidad: 7 }] }),
      );
      expect([retry.status, retry.body.data.id, retry.body.meta.idempotent]).toEqual([200, first.body.data.id, true]);
    });

    it('keeps references per company', async () => {
      const other = await postSale(
        stack,
        SALES_KEY_STRICT,
        saleBody(d, { referencia_externa: 'WEB-1001', detalles: [{ id_producto: d.productos.mouse, cantidad: 1 }] }),
      );
      expect(other.status).toBe(201);
    });
  });

  describe('stock when the company forbids selling without stock', () => {
    it('refuses a line above the stock with 422 naming the line, and moves nothing', async () => {
      const before = await dataSnapshot(stack);
      const { status, body } = await postSale(
        stack,
        SALES_KEY_STRICT,
        saleBody(d, {
          detalles: [
            { id_producto: d.productos.mouse, cantidad: 1 },
            { id_producto: d.productos.cemento, cantidad: 100.5 },
          ],
        }),
      );
      expect(status).toBe(422);
      expect(body.details).toEqual({
        'detalles.1.cantidad': ['Stock insuficiente para el producto CEM-42: disponible 100, solicitado 100.5'],
      });
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('lets 20 concurrent sales of 1 take exactly the 12 laptops there are', async () => {
      const laptop = d.productos.laptop!;
      const replies = await Promise.all(
        Array.from({ length: 20 }, () =>
          postSale(stack, SALES_KEY_STRICT, saleBody(d, { detalles: [{ id_producto: laptop, cantidad: 1 }] })),
        ),
      );
      expect(replies.filter((r) => r.status === 201)).toHaveLength(12);
      expect(replies.filter((r) => r.status === 422)).toHaveLength(8);
      expect(await stockOf(stack, laptop, d.bodegas.principal!)).toBe('0.000');
      expect(await ledgerOf(stack, laptop, d.bodegas.principal!)).toMatchObject({ stock: '0.000' });
      const numbers = (
        await stack.query<{ numero: number }>('select numero from sales.ventas where documento_id = $1 order by numero', [
          d.documentos.factura,
        ])
      ).map((r) => r.numero);
      expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
    });
  });

  describe('every validation rule answers 422 with its field and changes nothing', () => {
    const long = (n: number) => 'x'.repeat(n);
    const line = (over: Record<string, unknown> = {}) => ({ id_producto: a.productos.laptop, cantidad: 1, ...over });
    const cases: Array<[string, () => Record<string, unknown>, string, string?]> = [
      ['fecha missing', () => saleBody(a, { fecha: undefined }), 'fecha'],
      ['fecha that does not exist', () => saleBody(a, { fecha: '2026-02-30' }), 'fecha'],
      ['estado not accepted on create', () => saleBody(a, { estado: 'Pre-venta' }), 'estado'],
      ['estado missing', () => saleBody(a, { estado: undefined }), 'estado'],
      ['no branch', () => saleBody(a, { id_sucursal: undefined }), 'id_sucursal'],
      ['branch name unknown', () => saleBody(a, { id_sucursal: undefined, sucursal: 'Sucursal Sur' }), 'sucursal'],
      ['branch of another company', () => saleBody(a, { id_sucursal: b.sucursales.centro }), 'id_sucursal'],
      ['warehouse missing', () => saleBody(a, { id_bodega: undefined }), 'id_bodega'],
      ['warehouse of another company', () => saleBody(a, { id_bodega: b.bodegas.principal }), 'id_bodega'],
      ['warehouse of another branch', () => saleBody(a, { id_bodega: a.bodegas.norte }), 'id_bodega'],
      ['document type missing', () => saleBody(a, { id_documento: undefined }), 'id_documento'],
      ['document type of another branch', () => saleBody(a, { id_documento: a.documentos.norte }), 'id_documento'],
      ['document type inactive', () => saleBody(a, { id_documento: a.documentos.inactivo }), 'id_documento'],
      ['quotation-only document type for a sale', () => saleBody(a, { id_documento: a.documentos.cotizacion }), 'id_documento'],
      ['document type of another company', () => saleBody(a, { id_documento: b.documentos.factura }), 'id_documento'],
      ['channel missing for a sale', () => saleBody(a, { id_canal: undefined }), 'id_canal'],
      ['channel unknown', () => saleBody(a, { id_canal: b.canales.tienda }), 'id_canal'],
      ['customer missing for Pendiente', () => saleBody(a, { estado: 'Pendiente' }), 'id_cliente'],
      ['customer unknown', () => saleBody(a, { id_cliente: b.clientes.juan }), 'id_cliente'],
      [
        'customer over its credit limit',
        () => saleBody(a, { estado: 'Pendiente', id_cliente: a.clientes.juan, detalles: [line({ cantidad: 2 })] }),
        'id_cliente',
      ],
      ['cotizacion true on a sale', () => saleBody(a, { cotizacion: true }), 'cotizacion'],
      ['fecha_expiracion not a date', () => saleBody(a, { fecha_expiracion: '10/04/2026' }), 'fecha_expiracion'],
      ['fecha_expiracion before fecha', () => saleBody(a, { fecha_expiracion: '2026-03-09' }), 'fecha_expiracion'],
      ['forma_pago over 100 characters', () => saleBody(a, { forma_pago: long(101) }), 'forma_pago'],
      ['observaciones over 1000 characters', () => saleBody(a, { observaciones: long(1001) }), 'observaciones'],
      ['referencia_externa over 255 characters', () => saleBody(a, { referencia_externa: long(256) }), 'referencia_externa'],
      ['referencia that contradicts referencia_externa', () => saleBody(a, { referencia_externa: 'R-1', referencia: 'R-2' }), 'referencia'],
      ['monto_pago negative', () => saleBody(a, { monto_pago: -1 }), 'monto_pago'],
      ['cambio negative', () => saleBody(a, { cambio: -0.01 }), 'cambio'],
      ['cambio with three decimals', () => saleBody(a, { cambio: 0.001 }), 'cambio'],
      ['detalles missing', () => saleBody(a, { detalles: undefined }), 'detalles'],
      ['detalles empty', () => saleBody(a, { detalles: [] }), 'detalles'],
      ['more than 100 lines', () => saleBody(a, { detalles: Array.from({ length: 101 }, () => line()) }), 'detalles'],
      ['line without product', () => saleBody(a, { detalles: [{ cantidad: 1 }] }), 'detalles.0.id_producto'],
      ['cantidad missing', () => saleBody(a, { detalles: [line({ cantidad: undefined })] }), 'detalles.0.cantidad'],
      ['cantidad 0', () => saleBody(a, { detalles: [line(), line({ cantidad: 0 })] }), 'detalles.1.cantidad'],
      ['cantidad below 0.0001', () => saleBody(a, { detalles: [line({ cantidad: 0.00009 })] }), 'detalles.0.cantidad'],
      ['cantidad as text', () => saleBody(a, { detalles: [line({ cantidad: '1' })] }), 'detalles.0.cantidad'],
      ['precio negative', () => saleBody(a, { detalles: [line({ precio: -1 })] }), 'detalles.0.precio'],
      ['descuento negative', () => saleBody(a, { detalles: [line({ descuento: -1 })] }), 'detalles.0.descuento'],
      ['descuento above the line', () => saleBody(a, { detalles: [line({ precio: 10, descuento: 10.01 })] }), 'detalles.0.descuento'],
      [
        'porcentaje_impuesto above 100',
        () => saleBody(a, { detalles: [line({ porcentaje_impuesto: 100.5 })] }),
        'detalles.0.porcentaje_impuesto',
      ],
      [
        'unknown product id (never 500)',
        () => saleBody(a, { detalles: [line(), line(), line(), line({ id_producto: 999999 })] }),
        'detalles.3.id_producto',
      ],
      [
        'product of another company',
        () => saleBody(a, { detalles: [line({ id_producto: b.productos.laptop })] }),
        'detalles.0.id_producto',
      ],
      [
        'unknown product code',
        () => saleBody(a, { detalles: [{ codigo_producto: 'NO-EXISTE', cantidad: 1 }] }),
        'detalles.0.codigo_producto',
      ],
      ['inactive product', () => saleBody(a, { detalles: [line({ id_producto: a.productos.viejo })] }), 'detalles.0.id_producto'],
      [
        'line total over what the columns keep',
        () => saleBody(a, { detalles: [line({ cantidad: 999999999, precio: 999999999 })] }),
        'detalles.0.cantidad',
      ],
      ['body not an object', () => [1, 2] as unknown as Record<string, unknown>, '_'],
      ['lone UTF-16 surrogate in observaciones', () => saleBody(a, { observaciones: 'entrega \ud800' }), 'observaciones'],
      [
        'lone UTF-16 surrogate in a line code',
        () => saleBody(a, { detalles: [{ codigo_producto: '\udfffLAP', cantidad: 1 }] }),
        'detalles.0.codigo_producto',
      ],
    ];

    it.each(cases)('%s', async (_name, body, field) => {
      const before = await dataSnapshot(stack);
      const res = await postSale(stack, SALES_KEY_A, body());
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ success: false, code: 422, error: expect.any(String) });
      expect(Object.keys(res.body.details)).toContain(field);
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('refuses a company without an active user', async () => {
      const c = refsOf(seeded, 'c');
      const before = await dataSnapshot(stack);
      const res = await postSale(stack, SALES_KEY_NOUSER, saleBody(c));
      expect(res.status).toBe(422);
      expect(res.body.error).toMatch(/^La empresa no tiene un usuario activo/);
      expect(await dataSnapshot(stack)).toEqual(before);
    });

    it('answers 400 for unparsable JSON and 415 for another content type, storing nothing', async () => {
      const before = await dataSnapshot(stack);
      const broken = await stack.api(`${API}/sales`, {
        key: SALES_KEY_A,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"fecha": ',
      });
      expect(broken.status).toBe(400);
      const text = await stack.api(`${API}/sales`, {
        key: SALES_KEY_A,
        method: 'POST',
        headers: { 'Content-Type': 'text/plain' },
        body: 'hola',
      });
      expect(text.status).toBe(415);
      expect(await dataSnapshot(stack)).toEqual(before);
    });
  });

  describe('back office', () => {
    it('annuls a sale: state Anulada, its stock back once', async () => {
      const mouse = a.productos.mouse!;
      const principal = a.bodegas.principal!;
      const before = Number(await stockOf(stack, mouse, principal));
      const { body } = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, {
          detalles: [
            { id_producto: mouse, cantidad: 1.5 },
            { id_producto: mouse, cantidad: 2 },
            { id_producto: a.productos.instalacion, cantidad: 1 },
          ],
        }),
      );
      expect(Number(await stockOf(stack, mouse, principal))).toBe(before - 3.5);
      const annul = () =>
        stack.admin.request(
          salesAdminSubjects,
          'sales.admin.annul',
          { empresa_id: a.id, id_venta: body.data.id },
          { requestId: 'test-annul' },
        );
      const annulled = await annul();
      expect(annulled).toMatchObject({ estado: 'Anulada', saldo: 0 });
      expect(Number(await stockOf(stack, mouse, principal))).toBe(before);
      const movimientos = (await ledgerOf(stack, mouse, principal)).movimientos;
      await annul();
      expect(Number(await stockOf(stack, mouse, principal))).toBe(before);
      expect((await ledgerOf(stack, mouse, principal)).movimientos).toBe(movimientos);
      expect((await json(await stack.api(`${API}/sales/${body.data.id}`, { key: SALES_KEY_A }))).data.estado).toBe('Anulada');
    });

    it('marks the fiscal document emitted', async () => {
      const { body } = await postSale(stack, SALES_KEY_A, saleBody(a));
      const marked = await stack.admin.request(
        salesAdminSubjects,
        'sales.admin.fiscal-emitted',
        { empresa_id: a.id, id_venta: body.data.id },
        { requestId: 'test-fiscal' },
      );
      expect(marked.documento_fiscal_emitido).toBe(true);
      await expect(
        stack.admin.request(
          salesAdminSubjects,
          'sales.admin.fiscal-emitted',
          { empresa_id: b.id, id_venta: body.data.id },
          { requestId: 'test-fiscal' },
        ),
      ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });
  });
});
