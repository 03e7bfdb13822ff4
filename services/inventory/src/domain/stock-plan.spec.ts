import { aggregateLines, planAjuste, planReturn, planTake, shortfallDetails, trim } from './stock-plan';

describe('aggregateLines', () => {
  it('sums the lines of one product exactly and remembers where each came from', () => {
    const sut = aggregateLines([
      { id_producto: 7, cantidad: '0.1' },
      { id_producto: 9, cantidad: '1' },
      { id_producto: 7, cantidad: '0.2' },
    ]);
    expect(sut).toEqual([
      { productoId: 7, cantidad: '0.300', lineIndexes: [0, 2] },
      { productoId: 9, cantidad: '1.000', lineIndexes: [1] },
    ]);
  });

  it('rounds each quantity half up to the three decimals stock is kept with', () => {
    expect(aggregateLines([{ id_producto: 1, cantidad: '1.0005' }])[0]!.cantidad).toBe('1.001');
    expect(aggregateLines([{ id_producto: 1, cantidad: '0.0004' }])[0]!.cantidad).toBe('0.000');
  });
});

describe('planTake', () => {
  const stock: Record<number, string> = { 1: '5.000', 2: '0.500' };
  const lines = aggregateLines([
    { id_producto: 1, cantidad: '5' },
    { id_producto: 2, cantidad: '0.75' },
    { id_producto: 3, cantidad: '1' },
  ]);

  it('refuses every line that exceeds its stock when selling without stock is forbidden, counting a missing entry as 0', () => {
    const sut = planTake(lines, 4, (id) => stock[id], false);
    expect(sut.moves).toEqual([{ productoId: 1, bodegaId: 4, cantidad: '-5.000', stockResultante: '0.000' }]);
    expect(sut.shortfalls).toEqual([
      { productoId: 2, bodegaId: 4, disponible: '0.500', solicitado: '0.750', lineIndexes: [1] },
      { productoId: 3, bodegaId: 4, disponible: '0.000', solicitado: '1.000', lineIndexes: [2] },
    ]);
  });

  it('lets stock go below zero when allowed', () => {
    const sut = planTake(lines, 4, (id) => stock[id], true);
    expect(sut.shortfalls).toEqual([]);
    expect(sut.moves.map((m) => m.stockResultante)).toEqual(['0.000', '-0.250', '-1.000']);
  });
});

describe('planReturn', () => {
  it('puts each line back on top of the current stock', () => {
    const sut = planReturn([{ productoId: 1, cantidad: '2.500', lineIndexes: [] }], 3, () => '-1.000');
    expect(sut).toEqual([{ productoId: 1, bodegaId: 3, cantidad: '2.500', stockResultante: '1.500' }]);
  });
});

describe('planAjuste', () => {
  const stockOf = () => '4.000';

  it('adds relative changes and moves the difference to an absolute value', () => {
    const sut = planAjuste(
      [
        { productoId: 1, bodegaId: 1, cantidad: '-1.5', lineIndex: 0 },
        { productoId: 2, bodegaId: 1, stock: '10', lineIndex: 1 },
        { productoId: 3, bodegaId: 1, stock: '4', lineIndex: 2 },
      ],
      stockOf,
      false,
    );
    expect(sut.shortfalls).toEqual([]);
    expect(sut.moves).toEqual([
      { productoId: 1, bodegaId: 1, cantidad: '-1.500', stockResultante: '2.500' },
      { productoId: 2, bodegaId: 1, cantidad: '6.000', stockResultante: '10.000' },
    ]);
  });

  it('refuses a decrease below zero unless allowed, but never an absolute value', () => {
    const lines = [
      { productoId: 1, bodegaId: 1, cantidad: '-5', lineIndex: 0 },
      { productoId: 2, bodegaId: 1, stock: '-2', lineIndex: 1 },
    ];
    const refused = planAjuste(lines, stockOf, false);
    expect(refused.shortfalls).toEqual([{ productoId: 1, bodegaId: 1, disponible: '4.000', solicitado: '5.000', lineIndexes: [0] }]);
    expect(refused.moves).toEqual([{ productoId: 2, bodegaId: 1, cantidad: '-6.000', stockResultante: '-2.000' }]);
    expect(planAjuste(lines, stockOf, true).shortfalls).toEqual([]);
  });
});

describe('shortfallDetails', () => {
  it('names every request line of a short product with what is available and what was asked', () => {
    const sut = shortfallDetails(
      [{ productoId: 7, bodegaId: 1, disponible: '2.500', solicitado: '3.000', lineIndexes: [0, 2] }],
      () => 'LAP-14',
    );
    expect(sut).toEqual({
      'lineas.0.cantidad': ['Stock insuficiente para el producto LAP-14: disponible 2.5, solicitado 3'],
      'lineas.2.cantidad': ['Stock insuficiente para el producto LAP-14: disponible 2.5, solicitado 3'],
    });
  });

  it('writes quantities without trailing zeros', () => {
    expect(trim('-0.250')).toBe('-0.25');
  });
});
