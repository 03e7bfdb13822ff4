import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SeedOutput } from '@erp/back-office';
import { Stack, json } from '../support/stack';
import { API, SALES_KEY_A, SALES_KEY_B, salesFixture, refsOf } from '../support/sales-fixture';
import { stockOf } from '../../services/inventory/test/inventory.factories';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Sale = any;

const venta = (
  ref: string,
  fecha: string,
  estado: string,
  documento: string,
  detalles: unknown[],
  extra: Record<string, unknown> = {},
) => ({
  ref,
  fecha,
  estado,
  sucursal: 'centro',
  bodega: 'principal',
  documento,
  ...(estado === 'Cotizacion' ? {} : { canal: 'tienda' }),
  detalles,
  ...extra,
});

/** Company A with nine sales of known dates, states and totals (ties on fecha and on total); B with one. */
function readFixture() {
  const fixture = salesFixture();
  const [a, b] = fixture.empresas as Array<Record<string, unknown>>;
  a!.ventas = [
    venta('v1', '2026-01-05', 'Completada', 'factura', [{ producto: 'laptop', cantidad: 1 }]),
    venta('v2', '2026-01-05', 'Completada', 'ticket', [{ producto: 'mouse', cantidad: 2 }]),
    venta('v3', '2026-01-20', 'Pendiente', 'factura', [{ producto: 'cemento', cantidad: 10 }], { cliente: 'libre' }),
    venta('v4', '2026-02-01', 'Cotizacion', 'cotizacion', [{ producto: 'laptop', cantidad: 2, precio: 600 }]),
    venta('v5', '2026-02-01', 'Completada', 'factura', [{ producto: 'mouse', cantidad: 2 }]),
    venta('v6', '2026-02-15', 'Completada', 'factura', [{ producto: 'libro', cantidad: 3 }], { anulada: true }),
    venta(
      'v7',
      '2026-02-28',
      'Pagada',
      'factura',
      [
        { producto: 'laptop', cantidad: 1 },
        { producto: 'mouse', cantidad: 1 },
      ],
      { documento_fiscal_emitido: true, referencia_externa: 'POS-7' },
    ),
    venta('v8', '2026-03-01', 'Completada', 'ticket', [{ producto: 'instalacion', cantidad: 2 }]),
    venta('v9', '2026-03-01', 'Pendiente', 'ticket', [{ producto: 'mouse', cantidad: 1, descuento: 0.95 }], { cliente: 'juan' }),
  ];
  b!.ventas = [venta('b1', '2026-01-10', 'Completada', 'factura', [{ producto: 'laptop', cantidad: 1 }])];
  return { empresas: [a, b] };
}

const cents = (n: number) => Math.round(n * 100);

describe('GET /sales, /sales/{id} and /sales/summary', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let all: Sale[];

  const get = async (query: string, key = SALES_KEY_A) => {
    const res = await stack.api(`${API}/sales${query}`, { key });
    return { status: res.status, body: await json(res) };
  };
  const list = async (query: string) => {
    const { status, body } = await get(`?per_page=200${query ? `&${query}` : ''}`);
    expect(status).toBe(200);
    return body.data as Sale[];
  };

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'] });
    seeded = await stack.seed(readFixture());
    all = await list('');
  });
  afterAll(() => stack.stop());

  it('loads the fixture’s sales through the pipeline: states, fiscal mark, annulment with its stock back', () => {
    const ventas = seeded.empresas.a!.ventas as Record<string, number>;
    expect(Object.keys(ventas)).toHaveLength(9);
    const byId = new Map(all.map((s) => [s.id, s]));
    expect(byId.get(ventas.v6)).toMatchObject({ estado: 'Anulada', total: 36, exenta: 36 });
    expect(byId.get(ventas.v7)).toMatchObject({
      estado: 'Completada',
      documento_fiscal_emitido: true,
      monto_pago: 669.94,
      referencia_externa: 'POS-7',
      referencia: 'POS-7',
    });
    expect(byId.get(ventas.v4)).toMatchObject({ estado: 'Cotizacion', cotizacion: true, correlativo: 'COT-1' });
    expect(byId.get(ventas.v9)).toMatchObject({ estado: 'Pendiente', nombre_cliente: 'Juan Pérez', saldo: 19, descuento: 0.95 });
    expect(byId.get(ventas.v8)).toMatchObject({ nombre_cliente: 'Consumidor Final', nombre_usuario: 'Admin A' });
  });

  it('keeps the annulled sale’s stock in the warehouse', async () => {
    const a = refsOf(seeded, 'a');
    expect(await stockOf(stack, a.productos.libro!, a.bodegas.principal!)).toBe('40.000');
  });

  it('lists by fecha desc then id desc by default, each sale with its lines', async () => {
    const { body } = await get('');
    const expected = [...all].sort((x, y) => (x.fecha === y.fecha ? y.id - x.id : x.fecha < y.fecha ? 1 : -1));
    expect(body.data.map((s: Sale) => s.id)).toEqual(expected.map((s) => s.id));
    expect(body.meta.filters_applied).toEqual({});
    expect(body.pagination).toEqual({
      current_page: 1,
      per_page: 100,
      total: 9,
      total_pages: 1,
      has_next: false,
      has_prev: false,
      from: 1,
      to: 9,
    });
    const v7 = body.data.find((s: Sale) => s.referencia_externa === 'POS-7');
    expect(v7.detalles).toEqual([
      expect.objectContaining({
        id: expect.any(Number),
        id_producto: expect.any(Number),
        codigo: 'LAP-14',
        cantidad: 1,
        precio: 649.99,
        sub_total: 575.21,
        iva: 74.78,
        total: 649.99,
        porcentaje_impuesto: 13,
      }),
      expect.objectContaining({ codigo: 'MOU-01', cantidad: 1, precio: 19.95, sub_total: 17.65, iva: 2.3, total: 19.95 }),
    ]);
  });

  const correlativoKey = (s: Sale): [string, number] => {
    const m = /^(.*?)(\d+)$/.exec(s.correlativo)!;
    return [m[1]!, Number(m[2])];
  };
  const compare: Record<string, (x: Sale, y: Sale) => number> = {
    fecha: (x, y) => (x.fecha < y.fecha ? -1 : x.fecha > y.fecha ? 1 : 0),
    total: (x, y) => x.total - y.total,
    created_at: (x, y) => Date.parse(x.created_at) - Date.parse(y.created_at),
    correlativo: (x, y) => {
      const [px, nx] = correlativoKey(x);
      const [py, ny] = correlativoKey(y);
      return px === py ? nx - ny : px < py ? -1 : 1;
    },
  };

  it.each(
    ['fecha', 'total', 'correlativo', 'created_at'].flatMap((by) => [
      [by, 'asc'],
      [by, 'desc'],
    ]),
  )('orders by %s %s with id as the tie-breaker', async (by, dir) => {
    const sign = dir === 'asc' ? 1 : -1;
    const got = await list(`order_by=${by}&order_direction=${dir}`);
    const expected = [...all].sort((x, y) => sign * (compare[by]!(x, y) || x.id - y.id));
    expect(got.map((s) => s.id)).toEqual(expected.map((s) => s.id));
  });

  it('pages without skipping or repeating', async () => {
    const pages = await Promise.all([1, 2, 3].map((page) => get(`?per_page=4&page=${page}&order_by=total`)));
    expect(pages.flatMap((p) => p.body.data.map((s: Sale) => s.id))).toEqual((await list('order_by=total')).map((s) => s.id));
    expect(pages[2]!.body.pagination).toEqual({
      current_page: 3,
      per_page: 4,
      total: 9,
      total_pages: 3,
      has_next: false,
      has_prev: true,
      from: 9,
      to: 9,
    });
    expect((await get('?per_page=4&page=4')).body).toMatchObject({
      data: [],
      pagination: { total: 9, from: null, to: null, has_next: false },
    });
  });

  it.each([
    ['fecha_inicio=2026-02-01', (s: Sale) => s.fecha >= '2026-02-01', { fecha_inicio: '2026-02-01' }],
    ['fecha_fin=2026-02-01', (s: Sale) => s.fecha <= '2026-02-01', { fecha_fin: '2026-02-01' }],
    [
      'fecha_inicio=2026-02-01&fecha_fin=2026-02-28',
      (s: Sale) => s.fecha >= '2026-02-01' && s.fecha <= '2026-02-28',
      { fecha_inicio: '2026-02-01', fecha_fin: '2026-02-28' },
    ],
    [
      'fecha_inicio=2026-03-01&fecha_fin=2026-03-01',
      (s: Sale) => s.fecha === '2026-03-01',
      { fecha_inicio: '2026-03-01', fecha_fin: '2026-03-01' },
    ],
    ['estado=Pendiente', (s: Sale) => s.estado === 'Pendiente', { estado: 'Pendiente' }],
    ['estado=Anulada&fecha_fin=2026-12-31', (s: Sale) => s.estado === 'Anulada', { estado: 'Anulada', fecha_fin: '2026-12-31' }],
  ])('filters by %s, inclusive, and echoes the filters', async (query, keep, applied) => {
    const { status, body } = await get(`?${query}&per_page=200`);
    expect(status).toBe(200);
    expect(body.data.map((s: Sale) => s.id).sort()).toEqual(
      all
        .filter(keep)
        .map((s) => s.id)
        .sort(),
    );
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.meta.filters_applied).toEqual(applied);
  });

  it.each([
    ['fecha_inicio=2026-03-01&fecha_fin=2026-02-01', 'fecha_fin'],
    ['fecha_inicio=2026-13-01', 'fecha_inicio'],
    ['fecha_fin=01-02-2026', 'fecha_fin'],
    ['estado=Pagada', 'estado'],
    ['order_by=nombre', 'order_by'],
    ['order_direction=up', 'order_direction'],
    ['per_page=201', 'per_page'],
    ['page=0', 'page'],
  ])('answers 400 with details for %s', async (query, field) => {
    for (const endpoint of field === 'order_by' || field === 'order_direction' || field === 'per_page' || field === 'page'
      ? ['']
      : ['', '/summary']) {
      const res = await stack.api(`${API}/sales${endpoint}?${query}`, { key: SALES_KEY_A });
      expect(res.status).toBe(400);
      const body = await json(res);
      expect(body).toMatchObject({ success: false, code: 400 });
      expect(Object.keys(body.details)).toEqual([field]);
    }
  });

  it('answers one sale as listed, 404 "Venta no encontrada" for unknown or foreign ids and 400 for non-integer ids', async () => {
    for (const sale of all) expect((await json(await stack.api(`${API}/sales/${sale.id}`, { key: SALES_KEY_A }))).data).toEqual(sale);
    const foreign = (seeded.empresas.b!.ventas as Record<string, number>).b1!;
    for (const id of [foreign, 999999]) {
      const res = await stack.api(`${API}/sales/${id}`, { key: SALES_KEY_A });
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ success: false, error: 'Venta no encontrada', code: 404, reason: 'venta_no_encontrada' });
    }
    for (const id of ['abc', '1.5', '0', '-2', '99999999999'])
      expect((await stack.api(`${API}/sales/${id}`, { key: SALES_KEY_A })).status).toBe(400);
  });

  it.each([
    '',
    'estado=Pendiente',
    'fecha_inicio=2026-02-01&fecha_fin=2026-02-28',
    'fecha_inicio=2026-02-15',
    'fecha_fin=2026-01-31',
    'estado=Cotizacion&fecha_inicio=2026-03-01',
  ])('summarises exactly the sales it would list (%s)', async (query) => {
    const listed = await list(query);
    const { status, body } = await get(`/summary${query ? `?${query}` : ''}`);
    expect(status).toBe(200);
    const s = body.data;
    const total = listed.reduce((n, x) => n + cents(x.total), 0);
    expect(s.cantidad_ventas).toBe(listed.length);
    expect(cents(s.total_ventas)).toBe(total);
    expect(cents(s.total_iva)).toBe(listed.reduce((n, x) => n + cents(x.iva), 0));
    expect(cents(s.total_descuentos)).toBe(listed.reduce((n, x) => n + cents(x.descuento), 0));
    expect(cents(s.promedio_venta)).toBe(listed.length === 0 ? 0 : Math.round(total / listed.length));
    for (const { estado, cantidad, total: t } of s.ventas_por_estado) {
      const mine = listed.filter((x) => x.estado === estado);
      expect([cantidad, cents(t)]).toEqual([mine.length, mine.reduce((n, x) => n + cents(x.total), 0)]);
    }
    expect(body.meta.filters_applied).toEqual(Object.fromEntries(new URLSearchParams(query)));
  });

  it('summarises every state unless estado filters, and never another company’s sales', async () => {
    const { body } = await get('/summary');
    expect(body.data.ventas_por_estado.map((e: { estado: string }) => e.estado)).toEqual([
      'Completada',
      'Pendiente',
      'Anulada',
      'Cotizacion',
    ]);
    expect(body.data).toMatchObject({ cantidad_ventas: 9 });
    const b = await get('/summary', SALES_KEY_B);
    expect(b.body.data).toMatchObject({ cantidad_ventas: 1, total_ventas: 649.99, total_iva: 74.78 });
    expect((await get('', SALES_KEY_B)).body.data).toHaveLength(1);
  });

  it('loads the demo data set’s sales (as npm start does)', async () => {
    const demo = JSON.parse(readFileSync(path.resolve(__dirname, '../fixtures/demo.json'), 'utf8'));
    // Only the sections of this stack's services: returns and integrations have their own tests.
    for (const e of demo.empresas) {
      delete e.devoluciones;
      delete e.integraciones;
    }
    const out = await stack.seed(demo);
    const refs = out.empresas.demo!;
    expect(Object.keys(refs.ventas as Record<string, number>)).toEqual(['v1', 'v2', 'v3', 'v4', 'v5']);
    const key = Object.values(refs.api_keys as Record<string, string>)[0]!;
    const sales = (await json(await stack.api(`${API}/sales?order_by=fecha&order_direction=asc`, { key }))).data as Sale[];
    expect(sales.map((s) => [s.estado, s.correlativo])).toEqual([
      ['Completada', 'FAC-1'],
      ['Pendiente', '1000'],
      ['Cotizacion', 'COT-1'],
      ['Completada', 'FAC-2'],
      ['Anulada', 'FN-1'],
    ]);
    expect(sales[3]!.documento_fiscal_emitido).toBe(true);
    const productos = refs.productos as Record<string, number>;
    const bodegas = refs.bodegas as Record<string, number>;
    expect(await stockOf(stack, productos.laptop!, bodegas.norte!)).toBe('4.000');
    expect(await stockOf(stack, productos.laptop!, bodegas.principal!)).toBe('11.000');
  });
});
