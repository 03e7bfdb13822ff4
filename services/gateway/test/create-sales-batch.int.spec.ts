import type { Bus } from '@erp/bus';
import { AppError, SaleBatchBody, salesApiSubjects } from '@erp/contracts';
import { harness, tenant, type Harness } from '@erp/testing';
import { createSalesBatch } from '../src/flows/create-sales-batch.flow';

const ctx = tenant(1, { usuario: { id: 9, nombre: 'Ana' } });

const venta = (referencia_externa: string) => ({
  referencia_externa,
  fecha: '2026-02-01',
  estado: 'Cotizacion',
  id_sucursal: 1,
  id_bodega: 2,
  id_documento: 3,
  detalles: [{ id_producto: 5, cantidad: 1 }],
});

const sale = (id: number, referencia: string) => ({
  id,
  fecha: '2026-02-01',
  correlativo: `C-${id}`,
  referencia,
  referencia_externa: referencia,
  cotizacion: true,
  estado: 'Cotizacion' as const,
  forma_pago: null,
  total: 10,
  iva: 1.15,
  sub_total: 8.85,
  descuento: 0,
  exenta: 0,
  monto_pago: null,
  cambio: 0,
  saldo: 0,
  nombre_cliente: 'Consumidor Final',
  nombre_usuario: 'Ana',
  nombre_vendedor: null,
  id_sucursal: 1,
  id_bodega: 2,
  id_documento: 3,
  nombre_documento: 'Cotización',
  id_canal: null,
  id_cliente: null,
  fecha_expiracion: null,
  observaciones: null,
  documento_fiscal_emitido: false,
  created_at: '2026-02-01T00:00:00.000Z',
  updated_at: '2026-02-01T00:00:00.000Z',
  detalles: [],
});

/**
 * The gateway's side of a batch against a sales service on the real bus that answers one sale
 * per request (as when its time budget runs out after each), and then stops answering.
 */
describe('createSalesBatch against NATS', () => {
  let h: Harness<unknown>;
  let gateway: Bus;
  let sales: Bus;
  const requests: number[][] = [];
  let answerUpTo = Number.POSITIVE_INFINITY;

  beforeAll(async () => {
    h = await harness('gateway-batch', { requestTimeoutMs: 2_000 });
    gateway = h.bus;
    sales = await h.connect('sales-int', { requestTimeoutMs: 2_000 });
    sales.serve(
      { 'sales.batch.create': salesApiSubjects['sales.batch.create'] },
      {
        'sales.batch.create': async ({ ventas }) => {
          requests.push(ventas.map((v) => v.indice));
          const [first] = ventas;
          if (first!.indice >= answerUpTo) throw new AppError('UNAVAILABLE', 'Servicio no disponible (inventory)');
          const error =
            first!.venta.referencia_externa === 'B'
              ? {
                  code: 'BUSINESS_RULE' as const,
                  reason: 'stock_insuficiente' as const,
                  message: 'Stock insuficiente',
                  details: { 'detalles.0.cantidad': ['Stock insuficiente'] },
                }
              : undefined;
          return {
            resultados: [
              error
                ? { indice: first!.indice, error }
                : { indice: first!.indice, venta: sale(first!.indice + 1, first!.venta.referencia_externa!), idempotent: false },
            ],
          };
        },
      },
      { queue: 'sales' },
    );
    // The stand-in's subscription reaches the server before the first request is sent.
    await sales.nc.flush();
  });

  afterAll(() => h?.close());

  it('sends the sales not answered yet again until each has its result, in the order sent', async () => {
    requests.length = 0;
    answerUpTo = Number.POSITIVE_INFINITY;
    const body = SaleBatchBody.parse({ ventas: [venta('A'), { ...venta('X'), detalles: [] }, venta('B'), venta('C')] });
    const outcome = await createSalesBatch(gateway, body, ctx);
    expect(requests).toEqual([[0, 2, 3], [2, 3], [3]]);
    expect(outcome.resultados.map((r) => [r.indice, r.referencia_externa, r.status, r.error])).toEqual([
      [0, 'A', 201, undefined],
      [1, 'X', 422, 'Datos inválidos'],
      [2, 'B', 422, 'Stock insuficiente'],
      [3, 'C', 201, undefined],
    ]);
    expect(outcome.resultados[2]).toEqual({
      indice: 2,
      referencia_externa: 'B',
      status: 422,
      error: 'Stock insuficiente',
      code: 422,
      reason: 'stock_insuficiente',
      details: { 'detalles.0.cantidad': ['Stock insuficiente'] },
    });
    expect([outcome.creadas, outcome.existentes, outcome.rechazadas]).toEqual([2, 0, 2]);
  });

  it('gives the sales sales did not answer the error of the request that failed, keeping the outcome of those answered', async () => {
    requests.length = 0;
    answerUpTo = 1;
    const body = SaleBatchBody.parse({ ventas: [venta('A'), venta('C'), venta('D')] });
    const outcome = await createSalesBatch(gateway, body, ctx);
    expect(requests).toEqual([
      [0, 1, 2],
      [1, 2],
    ]);
    expect(outcome.resultados.map((r) => [r.referencia_externa, r.status, r.error])).toEqual([
      ['A', 201, undefined],
      ['C', 503, 'Servicio no disponible (inventory)'],
      ['D', 503, 'Servicio no disponible (inventory)'],
    ]);
  });
});
