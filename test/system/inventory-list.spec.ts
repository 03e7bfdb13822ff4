import { Stack, json } from '../support/stack';
import { CATALOG_KEY_A, CATALOG_KEY_B, seedCatalog, type Catalog } from '../support/inventory-catalog';

describe('GET /inventory', () => {
  let stack: Stack;
  let catalog: Catalog;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory'] });
    catalog = await seedCatalog(stack);
  });
  afterAll(() => stack?.stop());

  const list = async (query: string, key = CATALOG_KEY_A) => {
    const res = await stack.api(`/api/external/v1/inventory${query}`, { key });
    return { status: res.status, body: await json(res) };
  };
  /** The refs of company A's products on the page, in order. */
  const refsOf = (body: { data: Array<{ id: number }> }) => {
    const byId = new Map(Object.entries(catalog.a).map(([ref, id]) => [id, ref]));
    return body.data.map((p) => byId.get(p.id) ?? `other:${p.id}`);
  };

  it('lists the company’s live products by name with their stock in active warehouses, as JSON numbers', async () => {
    const { status, body } = await list('');
    expect(status).toBe(200);
    expect(refsOf(body)).toEqual(['p1', 'p2', 'p3', 'p7', 'p4', 'p5', 'p6']);
    expect(body.pagination).toEqual({
      current_page: 1,
      per_page: 100,
      total: 7,
      total_pages: 1,
      has_next: false,
      has_prev: false,
      from: 1,
      to: 7,
    });
    expect(body.meta).toEqual({ empresa: 'Catalogo A', timestamp: expect.any(String), filters_applied: {} });

    const laptop = body.data.find((p: { id: number }) => p.id === catalog.a.p3);
    expect(laptop).toMatchObject({
      nombre: 'Laptop 14',
      codigo: 'LAP-014',
      barcode: '7700000000014',
      nombre_categoria: 'Electronicos',
      precio: 649.99,
      costo: 480,
      costo_anterior: 470,
      costo_promedio: 475.25,
      marca: 'Acer',
      tipo: 'Producto',
      enable: 1,
    });
    expect(laptop.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(laptop.inventarios).toEqual([
      expect.objectContaining({
        id_producto: catalog.a.p3,
        stock: 3,
        stock_minimo: 5,
        stock_maximo: 100,
        nota: null,
        nombre_bodega: 'Bodega Principal',
        nombre_sucursal: 'Sucursal Centro',
      }),
      expect.objectContaining({ stock: 2.5, stock_minimo: 1, nombre_bodega: 'Bodega Reserva' }),
    ]);
    const teclado = body.data.find((p: { id: number }) => p.id === catalog.a.p6);
    expect(teclado.inventarios.map((i: { nombre_bodega: string }) => i.nombre_bodega)).toEqual(['Bodega Principal']);
    expect(teclado.nombre_categoria).toBeNull();
  });

  it.each([
    ['?codigo=aud', ['p1'], { codigo: 'aud' }],
    ['?codigo=C_', ['p6'], { codigo: 'C_' }],
    ['?nombre=LAPTOP', ['p3'], { nombre: 'LAPTOP' }],
    ['?nombre=%2050%25%20', ['p6'], { nombre: '50%' }],
    ['?categoria=acces', ['p2', 'p7', 'p4'], { categoria: 'acces' }],
    ['?marca=logi', ['p4', 'p6'], { marca: 'logi' }],
    ['?tipo=Servicio', ['p5'], { tipo: 'Servicio' }],
    ['?tipo=Producto&enable=1', ['p1', 'p2', 'p3', 'p7', 'p6'], { tipo: 'Producto', enable: 1 }],
    ['?enable=0', ['p4'], { enable: 0 }],
    ['?con_stock=true', ['p1', 'p3', 'p7', 'p4'], { con_stock: true }],
    ['?con_stock=0', ['p1', 'p2', 'p3', 'p7', 'p4', 'p5', 'p6'], { con_stock: false }],
    ['?stock_minimo=1', ['p2', 'p3', 'p6'], { stock_minimo: true }],
    ['?categoria=electr&con_stock=true&order_by=precio&order_direction=desc', ['p3', 'p1'], { categoria: 'electr', con_stock: true }],
    ['?nombre=&marca=%20%20', ['p1', 'p2', 'p3', 'p7', 'p4', 'p5', 'p6'], {}],
    ['?nombre=zapato', [], { nombre: 'zapato' }],
  ])('filters %s', async (query, refs, filters) => {
    const { status, body } = await list(query);
    expect(status).toBe(200);
    expect(refsOf(body)).toEqual(refs);
    expect(body.pagination.total).toBe(refs.length);
    expect(body.meta.filters_applied).toEqual(filters);
  });

  it.each([
    ['nombre', 'asc', ['p1', 'p2', 'p3', 'p7', 'p4', 'p5', 'p6']],
    ['nombre', 'desc', ['p6', 'p5', 'p4', 'p7', 'p3', 'p2', 'p1']],
    ['codigo', 'asc', ['p1', 'p2', 'p3', 'p7', 'p4', 'p5', 'p6']],
    ['codigo', 'desc', ['p6', 'p5', 'p4', 'p7', 'p3', 'p2', 'p1']],
    ['precio', 'asc', ['p2', 'p4', 'p6', 'p7', 'p5', 'p1', 'p3']],
    ['precio', 'desc', ['p3', 'p1', 'p5', 'p7', 'p6', 'p4', 'p2']],
    ['costo', 'asc', ['p5', 'p2', 'p4', 'p6', 'p7', 'p1', 'p3']],
    ['costo', 'desc', ['p3', 'p1', 'p7', 'p6', 'p4', 'p2', 'p5']],
    // Seeded in one transaction: every created_at ties, so the id decides.
    ['created_at', 'asc', ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']],
    ['created_at', 'desc', ['p7', 'p6', 'p5', 'p4', 'p3', 'p2', 'p1']],
  ])('orders by %s %s with id breaking ties, and pages of 2 neither skip nor repeat', async (orderBy, direction, refs) => {
    const all = await list(`?order_by=${orderBy}&order_direction=${direction}`);
    expect(refsOf(all.body)).toEqual(refs);
    const paged: string[] = [];
    for (let page = 1; page <= 4; page++)
      paged.push(...refsOf((await list(`?order_by=${orderBy}&order_direction=${direction}&per_page=2&page=${page}`)).body));
    expect(paged).toEqual(refs);
    expect(all.body.meta.filters_applied).toEqual({});
  });

  it('describes the page it answers, also past the end', async () => {
    expect((await list('?per_page=3&page=3')).body.pagination).toEqual({
      current_page: 3,
      per_page: 3,
      total: 7,
      total_pages: 3,
      has_next: false,
      has_prev: true,
      from: 7,
      to: 7,
    });
    const past = await list('?per_page=3&page=9');
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination).toMatchObject({ current_page: 9, total: 7, has_next: false, has_prev: true, from: null, to: null });
  });

  it.each([
    ['?per_page=201', 'per_page'],
    ['?per_page=0', 'per_page'],
    ['?page=0', 'page'],
    ['?page=1.5', 'page'],
    ['?order_by=stock', 'order_by'],
    ['?order_direction=up', 'order_direction'],
    ['?enable=2', 'enable'],
    ['?con_stock=yes', 'con_stock'],
    ['?stock_minimo=maybe', 'stock_minimo'],
    ['?tipo=producto', 'tipo'],
    [`?nombre=${'x'.repeat(101)}`, 'nombre'],
    ['?codigo=a&codigo=b', 'codigo'],
  ])('answers 400 with details for %s', async (query, field) => {
    const { status, body } = await list(query);
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, code: 400 });
    expect(Object.keys(body.details)).toEqual([field]);
  });

  it('never lists or counts another company’s products', async () => {
    const a = await list('?codigo=LAP');
    expect(a.body.data.map((p: { id: number }) => p.id)).toEqual([catalog.a.p3]);
    const b = await list('', CATALOG_KEY_B);
    expect(b.body.data.map((p: { id: number; precio: number }) => [p.id, p.precio])).toEqual([[catalog.b.p1, 700]]);
    expect(b.body.pagination.total).toBe(1);
    expect(b.body.meta.empresa).toBe('Catalogo B');
  });
});
