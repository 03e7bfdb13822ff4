import { KEY_A, KEY_B, Stack, json, twoCompanies } from '../support/stack';
import type { SeedOutput } from '@erp/back-office';

describe('GET /inventory/{id} through gateway, NATS and the inventory service', () => {
  let stack: Stack;
  let seeded: SeedOutput;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory'] });
    seeded = await stack.seed(twoCompanies());
  });
  afterAll(() => stack.stop());

  const productOf = (company: 'a' | 'b') => (seeded.empresas[company]!.productos as Record<string, number>).laptop!;

  it('returns the product of the key’s company with its stock in both warehouses as JSON numbers', async () => {
    const res = await stack.api(`/api/external/v1/inventory/${productOf('a')}`, { key: KEY_A });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.success).toBe(true);
    expect(body.meta).toEqual({ empresa: 'Empresa A', timestamp: expect.any(String), filters_applied: {} });
    expect(body.data).toMatchObject({
      id: productOf('a'),
      codigo: 'LAP-14',
      nombre_categoria: 'Electrónicos',
      precio: 649.99,
      costo_promedio: 475.25,
      enable: 1,
      tipo: 'Producto',
    });
    expect(body.data.inventarios).toEqual([
      expect.objectContaining({
        id_producto: productOf('a'),
        stock: 12,
        stock_minimo: 3,
        nombre_bodega: 'Bodega Principal',
        nombre_sucursal: 'Sucursal Centro',
      }),
      expect.objectContaining({ stock: 2.5, nombre_bodega: 'Bodega Reserva' }),
    ]);
    expect(body.data.inventarios[0].created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers 404 "Producto no encontrado" for another company’s product', async () => {
    const res = await stack.api(`/api/external/v1/inventory/${productOf('b')}`, { key: KEY_A });
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ success: false, error: 'Producto no encontrado', code: 404, reason: 'producto_no_encontrado' });
    const own = await stack.api(`/api/external/v1/inventory/${productOf('b')}`, { key: KEY_B });
    expect((await json(own)).data.inventarios[0].stock).toBe(7);
  });

  it.each(['abc', '1.5', '0', '-3', '99999999999'])('answers 400 with details for the id %p', async (id) => {
    const res = await stack.api(`/api/external/v1/inventory/${id}`, { key: KEY_A });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body).toMatchObject({ success: false, code: 400 });
    expect(Object.keys(body.details)).toEqual(['id']);
  });

  it('answers 404 for an id nobody has', async () => {
    const res = await stack.api('/api/external/v1/inventory/2147483000', { key: KEY_A });
    expect(res.status).toBe(404);
  });
});
