import { Decimal, cents, fromNumber, summarizeDocuments, toStock } from './money';

describe('the money kernel', () => {
  it('rounds money half up to cents and stock half up to three places, exactly', () => {
    expect([cents('0.005'), cents('-0.005'), cents('2.675'), cents(new Decimal('1').div(3))]).toEqual(['0.01', '-0.01', '2.68', '0.33']);
    expect([toStock('1.0005').toFixed(3), toStock('2.4994').toFixed(3)]).toEqual(['1.001', '2.499']);
    expect(fromNumber(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(new Decimal('0.1').plus('0.2').toFixed()).toBe('0.3');
  });

  it('summarizes documents per group, listing every group asked for in its order', () => {
    const sut = summarizeDocuments(
      [
        { grupo: 'b', cantidad: 2, total: '10.005', iva: '1.30', descuento: '0' },
        { grupo: 'a', cantidad: 1, total: '5', iva: '0.65', descuento: '1.5' },
      ],
      ['a', 'b', 'c'],
    );
    expect(sut).toEqual({
      cantidad: 3,
      total: '15.01',
      iva: '1.95',
      descuentos: '1.50',
      promedio: '5.00',
      grupos: [
        { grupo: 'a', cantidad: 1, total: '5.00' },
        { grupo: 'b', cantidad: 2, total: '10.01' },
        { grupo: 'c', cantidad: 0, total: '0.00' },
      ],
    });
    expect(summarizeDocuments([], ['x']).promedio).toBe('0.00');
  });
});
