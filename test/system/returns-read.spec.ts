import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SeedOutput } from '@erp/back-office';
import { Stack, json } from '../support/stack';
import { eventually } from '@erp/testing';
import { API, SALES_KEY_A, SALES_KEY_B, refsOf, salesFixture } from '../support/sales-fixture';
import { stockOf } from '../../services/inventory/test/inventory.factories';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Devolucion = any;

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
  canal: 'tienda',
  detalles,
  ...extra,
});

/**
 * Company A: four sales and six returns of every type with known amounts (ties on fecha, one
 * annulled, one of a pending sale, one of a service line, one annulment of a whole invoice
 * without lines); B: one sale and one return, for isolation.
 */
function returnsFixture() {
  const fixture = salesFixture();
  const [a, b] = fixture.empresas as Array<Record<string, unknown>>;
  a!.ventas = [
    venta('v1', '2026-01-05', 'Completada', 'factura', [
      { producto: 'laptop', cantidad: 1 },
      { producto: 'mouse', cantidad: 3, descuento: 1.5 },
    ]),
    venta('v2', '2026-01-10', 'Completada', 'ticket', [
      { producto: 'libro', cantidad: 4 },
      { producto: 'instalacion', cantidad: 1 },
    ]),
    venta('v3', '2026-02-01', 'Pendiente', 'factura', [{ producto: 'cemento', cantidad: 10 }], { cliente: 'juan' }),
    venta('v4', '2026-02-10', 'Completada', 'factura', [{ producto: 'mouse', cantidad: 2 }]),
  ];
  a!.devoluciones = [
    {
      ref: 'd1',
      venta: 'v1',
      fecha: '2026-01-06',
      tipo: 'devolucion',
      observaciones: 'Mouse con falla',
      detalles: [{ producto: 'mouse', cantidad: 1 }],
    },
    { ref: 'd2', venta: 'v2', fecha: '2026-01-12', tipo: 'descuento_ajuste', detalles: [{ producto: 'libro', cantidad: 2, precio: 3 }] },
    { ref: 'd3', venta: 'v3', fecha: '2026-02-03', tipo: 'devolucion', detalles: [{ producto: 'cemento', cantidad: 4 }] },
    {
      ref: 'd4',
      venta: 'v1',
      fecha: '2026-02-03',
      tipo: 'anulacion_factura',
      anulada: true,
      detalles: [{ producto: 'laptop', cantidad: 1 }],
    },
    { ref: 'd5', venta: 'v4', fecha: '2026-02-15', tipo: 'anulacion_factura' },
    { ref: 'd6', venta: 'v2', fecha: '2026-02-15', tipo: 'devolucion', detalles: [{ producto: 'instalacion', cantidad: 1 }] },
  ];
  b!.ventas = [venta('b1', '2026-01-10', 'Completada', 'factura', [{ producto: 'laptop', cantidad: 1 }])];
  b!.devoluciones = [{ ref: 'bd1', venta: 'b1', fecha: '2026-01-20', tipo: 'devolucion', detalles: [{ producto: 'laptop', cantidad: 1 }] }];
  return { empresas: [a, b] };
}

describe('GET /returns, /returns/{id} and /returns/summary', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let d: Record<string, number>;
  let all: Devolucion[];

  const get = async (query: string, key = SALES_KEY_A) => {
    const res = await stack.api(`${API}/returns${query}`, { key });
    return { status: res.status, body: await json(res) };
  };
  const ids = (list: Devolucion[]) => list.map((x) => x.id);

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns'] });
    seeded = await stack.seed(returnsFixture());
    d = seeded.empresas.a!.devoluciones as Record<string, number>;
    all = (await get('?per_page=200')).body.data;
  });
  afterAll(() => stack.stop());

  it('loads the fixture’s returns through the back office, numbered per company from the default series', () => {
    expect(Object.keys(d)).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'd6']);
    const byId = new Map(all.map((x) => [x.id, x]));
    expect(Object.keys(d).map((ref) => byId.get(d[ref])!.correlativo)).toEqual(['NC-1', 'NC-2', 'NC-3', 'NC-4', 'NC-5', 'NC-6']);
    expect(byId.get(d.d4)).toMatchObject({ enable: 0, estado: 'Anulada' });
    expect(all.filter((x) => x.id !== d.d4).every((x) => x.enable === 1 && x.estado === 'Confirmada')).toBe(true);
  });

  it('lists by fecha desc then id desc by default, each return with its lines and every field of the spec', async () => {
    const { status, body } = await get('');
    expect(status).toBe(200);
    expect(ids(body.data)).toEqual([d.d6, d.d5, d.d4, d.d3, d.d2, d.d1]);
    expect(body.meta).toMatchObject({ empresa: 'Ventas A', filters_applied: {} });
    expect(body.pagination).toEqual({
      current_page: 1,
      per_page: 100,
      total: 6,
      total_pages: 1,
      has_next: false,
      has_prev: false,
      from: 1,
      to: 6,
    });
    const d1 = body.data.find((x: Devolucion) => x.id === d.d1);
    const v1 = (seeded.empresas.a!.ventas as Record<string, number>).v1;
    expect(d1).toEqual({
      id: d.d1,
      fecha: '2026-01-06',
      correlativo: 'NC-1',
      tipo: 'devolucion',
      sub_total: 17.21,
      no_sujeta: 0,
      exenta: 0,
      cuenta_a_terceros: 0,
      total: 19.45,
      iva: 2.24,
      iva_retenido: 0,
      descuento: 0.5,
      observaciones: 'Mouse con falla',
      enable: 1,
      estado: 'Confirmada',
      id_venta: v1,
      nombre_cliente: 'Consumidor Final',
      nombre_usuario: 'Admin A',
      nombre_documento: 'Nota de crédito',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.stringMatching(/Z$/),
      detalles: [
        {
          id: expect.any(Number),
          id_detalle_venta: expect.any(Number),
          id_producto: refsOf(seeded, 'a').productos.mouse,
          nombre_producto: 'Mouse',
          codigo_producto: 'MOU-01',
          marca_producto: '',
          descripcion: '',
          cantidad: 1,
          precio: 19.95,
          costo: 9.22, // the sale line's cost (the product's average cost when sold)
          descuento: 0.5,
          porcentaje_impuesto: 13,
          sub_total: 17.21,
          iva: 2.24,
          no_sujeta: 0,
          cuenta_a_terceros: 0,
          exenta: 0,
          total: 19.45,
          medida: 'Unidad',
        },
      ],
    });
  });

  it('keeps what each type means: a price adjustment at the credited price, an invoice annulment of all that was left', () => {
    const byId = new Map(all.map((x) => [x.id, x]));
    expect(byId.get(d.d2)).toMatchObject({
      tipo: 'descuento_ajuste',
      total: 6,
      sub_total: 6,
      iva: 0,
      exenta: 6,
      detalles: [expect.objectContaining({ cantidad: 2, precio: 3, total: 6, exenta: 6 })],
    });
    expect(byId.get(d.d5)).toMatchObject({
      tipo: 'anulacion_factura',
      total: 39.9,
      sub_total: 35.31,
      iva: 4.59,
      detalles: [expect.objectContaining({ codigo_producto: 'MOU-01', cantidad: 2 })],
    });
    expect(byId.get(d.d3)).toMatchObject({
      nombre_cliente: 'Juan Pérez',
      total: 39.4,
      sub_total: 37.52,
      iva: 1.88,
      detalles: [expect.objectContaining({ porcentaje_impuesto: 5, cantidad: 4, precio: 9.85 })],
    });
  });

  it('put the stock back exactly: once per return, none for the price adjustment or the service, reversed for the annulled one', async () => {
    const a = refsOf(seeded, 'a');
    const principal = a.bodegas.principal!;
    expect(await stockOf(stack, a.productos.laptop!, principal)).toBe('11.000'); // 12 − 1 sold + 1 returned − 1 reversed
    expect(await stockOf(stack, a.productos.mouse!, principal)).toBe('148.000'); // 150 − 3 − 2 + 1 + 2
    expect(await stockOf(stack, a.productos.libro!, principal)).toBe('36.000'); // 40 − 4, the adjustment moves none
    expect(await stockOf(stack, a.productos.cemento!, principal)).toBe('94.000'); // 100 − 10 + 4
    const ledger = await stack.query<{ origen: string; n: number }>(
      "select origen, count(*)::int as n from inventory.movimientos where origen in ('devolucion', 'anulacion_devolucion') group by origen order by origen",
    );
    expect(ledger).toEqual([
      { origen: 'anulacion_devolucion', n: 1 },
      { origen: 'devolucion', n: 5 },
    ]);
  });

  it('credits the active returns of a pending sale to its saldo', async () => {
    const v3 = (seeded.empresas.a!.ventas as Record<string, number>).v3;
    await eventually(async () => {
      const sale = (await json(await stack.api(`${API}/sales/${v3}`, { key: SALES_KEY_A }))).data;
      expect([sale.total, sale.saldo]).toEqual([98.5, 59.1]);
    });
  });

  it('pages without skipping or repeating', async () => {
    const pages = await Promise.all([1, 2, 3].map((page) => get(`?per_page=2&page=${page}`)));
    expect(pages.flatMap((p) => ids(p.body.data))).toEqual([d.d6, d.d5, d.d4, d.d3, d.d2, d.d1]);
    expect(pages[2]!.body.pagination).toEqual({
      current_page: 3,
      per_page: 2,
      total: 6,
      total_pages: 3,
      has_next: false,
      has_prev: true,
      from: 5,
      to: 6,
    });
    expect((await get('?per_page=2&page=4')).body).toMatchObject({ data: [], pagination: { total: 6, from: null, to: null } });
  });

  type V = Record<string, number>;
  it.each<[string, (v: V) => Record<string, string | number>, string[]]>([
    ['fecha_inicio', () => ({ fecha_inicio: '2026-02-03' }), ['d6', 'd5', 'd4', 'd3']],
    ['fecha_fin', () => ({ fecha_fin: '2026-01-12' }), ['d2', 'd1']],
    ['both dates', () => ({ fecha_inicio: '2026-01-12', fecha_fin: '2026-02-03' }), ['d4', 'd3', 'd2']],
    ['one day', () => ({ fecha_inicio: '2026-02-15', fecha_fin: '2026-02-15' }), ['d6', 'd5']],
    ['id_venta', (v) => ({ id_venta: v.v1! }), ['d4', 'd1']],
    ['id_venta and a date', (v) => ({ id_venta: v.v2!, fecha_inicio: '2026-02-01' }), ['d6']],
  ])('filters by %s, inclusive, and echoes the filters', async (_label, filters, expected) => {
    const applied = filters(seeded.empresas.a!.ventas as V);
    const query = new URLSearchParams(Object.fromEntries(Object.entries(applied).map(([k, v]) => [k, String(v)]))).toString();
    const { status, body } = await get(`?${query}`);
    expect(status).toBe(200);
    expect(ids(body.data)).toEqual(expected.map((ref) => d[ref]));
    expect(body.meta.filters_applied).toEqual(applied);
  });

  it('finds nothing for another company’s sale', async () => {
    const b1 = (seeded.empresas.b!.ventas as Record<string, number>).b1;
    expect((await get(`?id_venta=${b1}`)).body).toMatchObject({
      data: [],
      pagination: { total: 0 },
      meta: { filters_applied: { id_venta: b1 } },
    });
  });

  it.each([
    ['fecha_inicio=2026-03-01&fecha_fin=2026-02-01', 'fecha_fin', true],
    ['fecha_inicio=2026-02-30', 'fecha_inicio', true],
    ['fecha_fin=15-02-2026', 'fecha_fin', true],
    ['id_venta=0', 'id_venta', false],
    ['id_venta=abc', 'id_venta', false],
    ['id_venta=1.5', 'id_venta', false],
    ['per_page=201', 'per_page', false],
    ['page=0', 'page', false],
  ])('answers 400 with details for %s', async (query, field, alsoSummary) => {
    for (const endpoint of alsoSummary ? ['', '/summary'] : ['']) {
      const res = await stack.api(`${API}/returns${endpoint}?${query}`, { key: SALES_KEY_A });
      expect(res.status).toBe(400);
      const body = await json(res);
      expect(body).toMatchObject({ success: false, code: 400 });
      expect(Object.keys(body.details)).toEqual([field]);
    }
  });

  it('answers one return as listed, 404 "Devolución no encontrada" for unknown or foreign ids and 400 for non-integer ids', async () => {
    for (const x of all) expect((await json(await stack.api(`${API}/returns/${x.id}`, { key: SALES_KEY_A }))).data).toEqual(x);
    const foreign = (seeded.empresas.b!.devoluciones as Record<string, number>).bd1!;
    expect((await stack.api(`${API}/returns/${foreign}`, { key: SALES_KEY_B })).status).toBe(200);
    for (const id of [foreign, 999999]) {
      const res = await stack.api(`${API}/returns/${id}`, { key: SALES_KEY_A });
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ success: false, error: 'Devolución no encontrada', code: 404, reason: 'devolucion_no_encontrada' });
    }
    for (const id of ['abc', '1.5', '0', '-2', '99999999999'])
      expect((await stack.api(`${API}/returns/${id}`, { key: SALES_KEY_A })).status).toBe(400);
  });

  it('summarises the active returns by type, with known totals', async () => {
    const { status, body } = await get('/summary');
    expect(status).toBe(200);
    expect(body.data).toEqual({
      cantidad_devoluciones: 5,
      total_devuelto: 129.75,
      total_iva: 11.59,
      total_descuentos: 0.5,
      promedio_devolucion: 25.95,
      devoluciones_por_tipo: [
        { tipo: 'devolucion', cantidad: 3, total: 83.85 },
        { tipo: 'descuento_ajuste', cantidad: 1, total: 6 },
        { tipo: 'anulacion_factura', cantidad: 1, total: 39.9 },
      ],
    });
    expect(body.meta.filters_applied).toEqual({});
  });

  it.each([
    '',
    'fecha_inicio=2026-02-01&fecha_fin=2026-02-15',
    'fecha_inicio=2026-02-03',
    'fecha_fin=2026-01-31',
    'fecha_inicio=2027-01-01',
  ])('summarises exactly the active returns it would list (%s)', async (query) => {
    const listed = (await get(`?per_page=200${query ? `&${query}` : ''}`)).body.data.filter((x: Devolucion) => x.enable === 1);
    const { body } = await get(`/summary${query ? `?${query}` : ''}`);
    const cents = (n: number) => Math.round(n * 100);
    const total = listed.reduce((n: number, x: Devolucion) => n + cents(x.total), 0);
    expect(body.data.cantidad_devoluciones).toBe(listed.length);
    expect(cents(body.data.total_devuelto)).toBe(total);
    expect(cents(body.data.total_iva)).toBe(listed.reduce((n: number, x: Devolucion) => n + cents(x.iva), 0));
    expect(cents(body.data.total_descuentos)).toBe(listed.reduce((n: number, x: Devolucion) => n + cents(x.descuento), 0));
    expect(cents(body.data.promedio_devolucion)).toBe(listed.length === 0 ? 0 : Math.round(total / listed.length));
    for (const { tipo, cantidad, total: t } of body.data.devoluciones_por_tipo) {
      const mine = listed.filter((x: Devolucion) => x.tipo === tipo);
      expect([cantidad, cents(t)]).toEqual([mine.length, mine.reduce((n: number, x: Devolucion) => n + cents(x.total), 0)]);
    }
    expect(body.meta.filters_applied).toEqual(Object.fromEntries(new URLSearchParams(query)));
  });

  it('never shows another company’s returns', async () => {
    const b = await get('?per_page=200', SALES_KEY_B);
    expect(ids(b.body.data)).toEqual([(seeded.empresas.b!.devoluciones as Record<string, number>).bd1]);
    expect(b.body.data[0]).toMatchObject({ correlativo: 'NC-1', total: 649.99, nombre_usuario: 'Admin B' });
    expect((await get('/summary', SALES_KEY_B)).body.data).toMatchObject({
      cantidad_devoluciones: 1,
      total_devuelto: 649.99,
      total_iva: 74.78,
    });
    expect(ids(all)).not.toContain(b.body.data[0].id);
  });

  it('loads the demo data set’s returns (as npm start does): one active, one annulled price adjustment that moved no stock', async () => {
    const demo = JSON.parse(readFileSync(path.resolve(__dirname, '../fixtures/demo.json'), 'utf8'));
    for (const e of demo.empresas) delete e.integraciones;
    const out = await stack.seed(demo);
    const refs = out.empresas.demo!;
    const devoluciones = refs.devoluciones as Record<string, number>;
    expect(Object.keys(devoluciones)).toEqual(['d1', 'd2']);
    const key = Object.values(refs.api_keys as Record<string, string>)[0]!;
    const listed = (await json(await stack.api(`${API}/returns`, { key }))).data as Devolucion[];
    expect(listed.map((x) => [x.id, x.tipo, x.estado, x.correlativo])).toEqual([
      [devoluciones.d2, 'descuento_ajuste', 'Anulada', 'NC-2'],
      [devoluciones.d1, 'devolucion', 'Confirmada', 'NC-1'],
    ]);
    const summary = (await json(await stack.api(`${API}/returns/summary`, { key }))).data;
    expect(summary).toMatchObject({
      cantidad_devoluciones: 1,
      devoluciones_por_tipo: [
        { tipo: 'devolucion', cantidad: 1 },
        { tipo: 'descuento_ajuste', cantidad: 0, total: 0 },
        { tipo: 'anulacion_factura', cantidad: 0, total: 0 },
      ],
    });
    const productos = refs.productos as Record<string, number>;
    const bodegas = refs.bodegas as Record<string, number>;
    expect(await stockOf(stack, productos.mouse!, bodegas.principal!)).toBe('149.000'); // 150 − 2 sold + 1 returned
    expect(await stockOf(stack, productos.libro!, bodegas.principal!)).toBe(
      String(demo.empresas[0].productos.find((p: { ref: string }) => p.ref === 'libro').inventarios[0].stock - 4) + '.000',
    );
  });
});
