import { Stack, json } from '../support/stack';
import { CATALOG_KEY_A, CATALOG_KEY_B, seedCatalog } from '../support/inventory-catalog';

interface ListedProduct {
  enable: 0 | 1;
  nombre_categoria: string | null;
  costo_promedio: number;
  inventarios: Array<{ stock: number; stock_minimo: number }>;
}

/** Exact sums of JSON numbers with at most `scale` decimals, done in integers. */
const units = (n: number, scale: number) => BigInt(Math.round(n * 10 ** scale));

describe('GET /inventory/summary', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory'] });
    await seedCatalog(stack);
  });
  afterAll(() => stack?.stop());

  const get = async (path: string, key = CATALOG_KEY_A) => json(await stack.api(`/api/external/v1${path}`, { key }));

  it('answers every field with the known values of the catalog', async () => {
    const body = await get('/inventory/summary');
    expect(body).toEqual({
      success: true,
      data: {
        productos: { total: 7, activos: 6, inactivos: 1 },
        inventario: { stock_total: 20.75, valor_total: 2967.5, productos_con_stock: 4, productos_sin_stock: 3, productos_stock_bajo: 3 },
        productos_por_categoria: [
          { categoria: 'Accesorios', cantidad: 3 },
          { categoria: 'Electronicos', cantidad: 2 },
          { categoria: 'Servicios', cantidad: 1 },
          { categoria: 'Sin categoría', cantidad: 1 },
        ],
      },
      meta: { empresa: 'Catalogo A', timestamp: expect.any(String), filters_applied: {} },
    });
  });

  it('agrees with the list: totals, stock and value are the sums of what GET /inventory shows', async () => {
    const { data } = await get('/inventory/summary');
    const listed: ListedProduct[] = [];
    for (let page = 1; ; page++) {
      const body = await get(`/inventory?per_page=2&page=${page}`);
      listed.push(...body.data);
      if (!body.pagination.has_next) break;
    }
    expect(data.productos.total).toBe(listed.length);
    expect(data.productos.activos + data.productos.inactivos).toBe(data.productos.total);
    expect(data.productos.activos).toBe(listed.filter((p) => p.enable === 1).length);
    expect(data.inventario.productos_con_stock + data.inventario.productos_sin_stock).toBe(data.productos.total);
    expect(data.inventario.productos_con_stock).toBe(listed.filter((p) => p.inventarios.some((i) => i.stock > 0)).length);
    expect(data.inventario.productos_stock_bajo).toBe(listed.filter((p) => p.inventarios.some((i) => i.stock <= i.stock_minimo)).length);

    const stock = listed.flatMap((p) => p.inventarios.map((i) => units(i.stock, 3))).reduce((x, y) => x + y, 0n);
    expect(units(data.inventario.stock_total, 3)).toBe(stock);
    const value = listed
      .flatMap((p) => p.inventarios.map((i) => units(p.costo_promedio, 4) * units(i.stock, 3)))
      .reduce((x, y) => x + y, 0n);
    // Σ costo_promedio × stock has 7 decimals; the summary gives it to the cent.
    expect(units(data.inventario.valor_total, 2)).toBe((value + 50_000n) / 100_000n);

    const categorias = data.productos_por_categoria as Array<{ categoria: string; cantidad: number }>;
    expect(categorias.reduce((n, c) => n + c.cantidad, 0)).toBe(data.productos.total);
    for (const c of categorias) {
      expect(listed.filter((p) => (p.nombre_categoria ?? 'Sin categoría') === c.categoria)).toHaveLength(c.cantidad);
    }
  });

  it('counts only the key’s company', async () => {
    const { data } = await get('/inventory/summary', CATALOG_KEY_B);
    expect(data).toEqual({
      productos: { total: 1, activos: 1, inactivos: 0 },
      inventario: { stock_total: 9, valor_total: 4500, productos_con_stock: 1, productos_sin_stock: 0, productos_stock_bajo: 0 },
      productos_por_categoria: [{ categoria: 'Electronicos', cantidad: 1 }],
    });
  });

  it('is not taken for a product id, and refuses a parameter by name instead of ignoring it', async () => {
    const res = await stack.api('/api/external/v1/inventory/summary', { key: CATALOG_KEY_A });
    expect(res.status).toBe(200);
    expect((await json(res)).data.productos.total).toBe(7);
    const filtered = await stack.api('/api/external/v1/inventory/summary?nombre=zzz', { key: CATALOG_KEY_A });
    expect(filtered.status).toBe(400);
    expect(await json(filtered)).toMatchObject({ reason: 'parametro_desconocido', details: { nombre: ['Parámetro desconocido'] } });
  });
});
