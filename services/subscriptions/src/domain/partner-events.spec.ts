import { currentData, partnerEventsOf, type SourceEvent } from './partner-events';

const movimiento = { id_producto: 5, codigo: 'MOU-01', id_bodega: 7, stock: '8.000', cambio: '-2.000', motivo: 'reserva', origen: 'venta' };
const stockChanged = (payload: Record<string, unknown>): SourceEvent => ({
  subject: 'events.inventory.stock.changed',
  payload: { empresa_id: 3, movimientos: [{ ...movimiento, referencia: '5f0c1a9e-3b7d-4c2a-9e51-0d6f2b8a4c17' }], ...payload },
  eventId: 'outbox-1',
  streamSequence: 9,
});

describe('partnerEventsOf: stock.changed', () => {
  it('names the cause the operation was made for: the sale, and the platform order it came from', () => {
    const [sut] = partnerEventsOf(stockChanged({ causa: { id_venta: 41, plataforma: 'woocommerce', id_pedido_plataforma: '727' } }));
    expect(sut).toMatchObject({ empresaId: 3, tipo: 'stock.changed', recurso: 'stock:5:7' });
    expect(sut!.data).toEqual({
      id_producto: 5,
      codigo: 'MOU-01',
      id_bodega: 7,
      stock: 8,
      cambio: -2,
      motivo: 'reserva',
      origen: 'venta',
      id_venta: 41,
      id_devolucion: null,
      plataforma: 'woocommerce',
      id_pedido_plataforma: '727',
      referencia: '5f0c1a9e-3b7d-4c2a-9e51-0d6f2b8a4c17',
    });
  });

  it('names a return alone as the cause of its stock', () => {
    const [sut] = partnerEventsOf(stockChanged({ causa: { id_devolucion: 8 } }));
    expect(sut!.data).toMatchObject({ id_venta: null, id_devolucion: 8, plataforma: null, id_pedido_plataforma: null });
  });

  it('gives every cause field as null for an event written before the cause was recorded', () => {
    const [sut] = partnerEventsOf(stockChanged({}));
    expect(sut!.data).toMatchObject({ id_venta: null, id_devolucion: null, plataforma: null, id_pedido_plataforma: null });
  });
});

describe('currentData', () => {
  it('gives a stock change logged before it named its cause the cause fields as null', () => {
    expect(currentData('stock.changed', { id_producto: 5, referencia: 'x' })).toEqual({
      id_producto: 5,
      referencia: 'x',
      id_venta: null,
      id_devolucion: null,
      plataforma: null,
      id_pedido_plataforma: null,
    });
  });

  it('leaves a stock change that names its cause, and every other event, as logged', () => {
    const named = { id_producto: 5, id_venta: 41, id_devolucion: null, plataforma: null, id_pedido_plataforma: null };
    expect(currentData('stock.changed', named)).toBe(named);
    const sale = { id: 41 };
    expect(currentData('sale.created', sale)).toBe(sale);
  });
});
