import { ApiError, PartnerApiClient } from '@erp/client';
import { API, SALES_KEY_A, SALES_KEY_B, refsOf, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { Stack } from '../support/stack';

/** The typed client against the real system: what a partner's integration would do. */
describe('the typed client against the gateway', () => {
  let stack: Stack;
  let a: SalesRefs;
  let sut: PartnerApiClient;
  const client = (apiKey: string, options: Partial<ConstructorParameters<typeof PartnerApiClient>[0]> = {}) =>
    new PartnerApiClient({ baseUrl: `${stack.baseUrl}${API}`, apiKey, fetch: stack.fetch, ...options });

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'] });
    a = refsOf(await stack.seed(salesFixture()), 'a');
    sut = client(SALES_KEY_A);
  });
  afterAll(() => stack.stop());

  it('creates a sale, gets the same sale back for the same referencia_externa, and reads it by id', async () => {
    const body = {
      referencia_externa: 'client-order-1',
      fecha: '2026-03-10',
      estado: 'Completada' as const,
      id_sucursal: a.sucursales.centro!,
      id_bodega: a.bodegas.principal!,
      id_documento: a.documentos.factura!,
      id_canal: a.canales.tienda!,
      detalles: [{ codigo_producto: 'MOU-01', cantidad: 2 }],
    };

    const created = await sut.post('/sales', { body });
    const again = await sut.post('/sales', { body });
    const read = await sut.get('/sales/{id}', { path: { id: created.body.data.id } });

    expect([created.status, created.body.meta.idempotent]).toEqual([201, false]);
    expect([again.status, again.body.meta.idempotent, again.body.data.id]).toEqual([200, true, created.body.data.id]);
    expect(read.body.data).toEqual(expect.objectContaining({ referencia_externa: 'client-order-1', estado: 'Completada', total: 39.9 }));
    expect(read.body.data.detalles).toEqual([expect.objectContaining({ codigo: 'MOU-01', cantidad: 2, precio: 19.95, total: 39.9 })]);
    expect(read.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });

  it('walks every product page by page and finds each one once', async () => {
    const first = await sut.get('/inventory', { query: { per_page: 1 } });

    const codes: string[] = [];
    for await (const product of sut.paginate('/inventory', { query: { per_page: 2 } })) codes.push(product.codigo);

    expect(first.body.pagination).toMatchObject({ total: codes.length });
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).toEqual(expect.arrayContaining(['LAP-14', 'MOU-01', 'SRV-INS']));
  });

  it('filters while it pages, and sees only its own company', async () => {
    const mine: number[] = [];
    for await (const venta of sut.paginate('/sales', { query: { estado: 'Completada', per_page: 1 } })) mine.push(venta.id);
    const theirs: number[] = [];
    for await (const venta of client(SALES_KEY_B).paginate('/sales')) theirs.push(venta.id);

    expect(mine.length).toBeGreaterThan(0);
    expect(theirs.filter((id) => mine.includes(id))).toEqual([]);
  });

  it('raises ApiError with the envelope: 404 with its message, 422 with details per field, 401 for a wrong key', async () => {
    const missing = await sut.get('/sales/{id}', { path: { id: 999_999 } }).catch((err: unknown) => err);
    const invalid = await sut
      .post('/sales', {
        body: {
          fecha: '2026-13-01',
          estado: 'Completada',
          id_sucursal: 999_999,
          id_canal: a.canales.tienda!,
          id_bodega: a.bodegas.principal!,
          id_documento: a.documentos.factura!,
          detalles: [],
        },
      })
      .catch((err: unknown) => err);
    const unauthorized = await client('not_a_valid_key_0123456789')
      .get('/system/rate-limit')
      .catch((err: unknown) => err);

    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toEqual(expect.objectContaining({ status: 404, message: 'Venta no encontrada' }));
    expect(invalid).toEqual(expect.objectContaining({ status: 422 }));
    expect(Object.keys((invalid as ApiError).details)).toEqual(expect.arrayContaining(['fecha', 'detalles']));
    expect(unauthorized).toEqual(expect.objectContaining({ status: 401, message: 'API key inválido o empresa inactiva' }));
  });

  it('retries a 503 while the sales service is down and succeeds once it is back', async () => {
    await stack.stopService('sales');
    const waits: number[] = [];
    const patient = client(SALES_KEY_A, {
      maxAttempts: 2,
      // Instead of sleeping the Retry-After, bring the service back.
      sleep: async (ms) => {
        waits.push(ms);
        await stack.startService('sales');
      },
    });

    const summary = await patient.get('/sales/summary');

    expect(waits).toEqual([5_000]);
    expect(summary.status).toBe(200);
    expect(summary.body.data.cantidad_ventas).toBeGreaterThan(0);
  });
});
