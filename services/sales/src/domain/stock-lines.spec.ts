import { heldStock, remainingMoves, ventaStockCause, stockDiff } from './stock-lines';

const line = (id_producto: number, cantidad: string, mueve_stock = true) => ({ id_producto, cantidad, mueve_stock });

describe('heldStock', () => {
  it('holds per product in the warehouse what inventory took, each line rounded to three decimals', () => {
    const sut = heldStock(true, 7, [line(1, '1.0005'), line(2, '3'), line(1, '2.0004'), line(3, '0.0004'), line(4, '5', false)]);
    expect([...sut.values()].map((h) => [h.id_producto, h.id_bodega, h.cantidad.toFixed(3)])).toEqual([
      [1, 7, '3.001'],
      [2, 7, '3.000'],
      [3, 7, '0.000'],
    ]);
  });

  it('holds nothing for a quotation or an annulled sale', () => {
    expect(heldStock(false, 7, [line(1, '5')]).size).toBe(0);
  });
});

describe('stockDiff', () => {
  const held = (bodega: number, ...lines: Array<[number, string]>) =>
    heldStock(
      true,
      bodega,
      lines.map(([p, q]) => line(p, q)),
    );

  it('gives back what a smaller quantity no longer holds: 5 → 3 returns 2', () => {
    expect(stockDiff(held(7, [1, '5']), held(7, [1, '3']))).toEqual([{ id_producto: 1, id_bodega: 7, cantidad: '2.000' }]);
  });

  it('takes what a larger quantity or a new line needs, and gives back a removed line', () => {
    expect(stockDiff(held(7, [1, '5'], [2, '1']), held(7, [1, '6.5'], [3, '2']))).toEqual([
      { id_producto: 1, id_bodega: 7, cantidad: '-1.500' },
      { id_producto: 2, id_bodega: 7, cantidad: '1.000' },
      { id_producto: 3, id_bodega: 7, cantidad: '-2.000' },
    ]);
  });

  it('moves the whole quantity between warehouses when the warehouse changes', () => {
    expect(stockDiff(held(7, [1, '5']), held(8, [1, '5']))).toEqual([
      { id_producto: 1, id_bodega: 7, cantidad: '5.000' },
      { id_producto: 1, id_bodega: 8, cantidad: '-5.000' },
    ]);
  });

  it('takes everything when a quotation becomes a sale and returns everything the other way', () => {
    const none = heldStock(false, 7, [line(1, '5')]);
    expect(stockDiff(none, held(7, [1, '5']))).toEqual([{ id_producto: 1, id_bodega: 7, cantidad: '-5.000' }]);
    expect(stockDiff(held(7, [1, '5']), none)).toEqual([{ id_producto: 1, id_bodega: 7, cantidad: '5.000' }]);
  });

  it('moves nothing when only prices change or lines of one product are split differently', () => {
    expect(stockDiff(held(7, [1, '5']), held(7, [1, '2'], [1, '3']))).toEqual([]);
  });
});

describe('remainingMoves', () => {
  const move = (id_producto: number, id_bodega: number, cantidad: string) => ({ id_producto, id_bodega, cantidad });

  it('is nothing when the key was applied with exactly these moves (a retry)', () => {
    expect(remainingMoves([move(1, 7, '2.000')], [move(1, 7, '2.000')])).toEqual([]);
  });

  it('is what is still missing after moves an uncommitted attempt applied under the key', () => {
    // The orphan returned 2 (5 → 3); this change wants 5 → 4, i.e. +1: take 1 back.
    expect(remainingMoves([move(1, 7, '1.000')], [move(1, 7, '2.000')])).toEqual([move(1, 7, '-1.000')]);
    // The orphan moved the sale to warehouse 8; this change only lowers 5 → 4 in warehouse 7.
    expect(remainingMoves([move(1, 7, '1.000')], [move(1, 7, '5.000'), move(1, 8, '-5.000')])).toEqual([
      move(1, 7, '-4.000'),
      move(1, 8, '5.000'),
    ]);
  });
});

describe('ventaStockCause', () => {
  it('names the sale alone when it was not made from a platform order', () => {
    expect(ventaStockCause({ id: 12, origen: 'api', referencia_externa: 'woo-727' })).toEqual({ id_venta: 12 });
    expect(ventaStockCause({ id: 12, origen: 'fixture', referencia_externa: null })).toEqual({ id_venta: 12 });
  });

  it('names the platform and its order id for a sale made from a platform order', () => {
    expect(ventaStockCause({ id: 12, origen: 'woocommerce', referencia_externa: 'woo-727' })).toEqual({
      id_venta: 12,
      plataforma: 'woocommerce',
      id_pedido_plataforma: '727',
    });
    expect(ventaStockCause({ id: 13, origen: 'shopify', referencia_externa: 'shop-450789469' })).toEqual({
      id_venta: 13,
      plataforma: 'shopify',
      id_pedido_plataforma: '450789469',
    });
  });

  it('names the platform without an order id when the reference does not name one of its orders', () => {
    expect(ventaStockCause({ id: 14, origen: 'shopify', referencia_externa: 'woo-727' })).toEqual({ id_venta: 14, plataforma: 'shopify' });
  });
});
