import { Decimal } from '@erp/contracts';
import { resolveRate, ventaTotals, taxLine, type TaxedLine } from './tax';

const line = (cantidad: string, precio: string, porcentaje_impuesto: string, descuento = '0') => {
  const result = taxLine({ cantidad, precio, descuento, porcentaje_impuesto });
  if (!result.ok) throw new Error(result.message);
  return result.line;
};

describe('taxLine (tax-inclusive prices, DESIGN §4)', () => {
  it.each([
    // cantidad, precio, rate, descuento → total, sub_total, iva, exenta
    ['13 %: one laptop', '1', '649.99', '13', '0', '649.99', '575.21', '74.78', '0.00'],
    ['13 %: two laptops', '2', '649.99', '13', '0', '1299.98', '1150.42', '149.56', '0.00'],
    ['0 %: exempt line', '4', '12', '0', '0', '48.00', '48.00', '0.00', '48.00'],
    ['line override 5 %', '20', '9.85', '5', '0', '197.00', '187.62', '9.38', '0.00'],
    ['discount before tax split', '2', '19.95', '13', '1.9', '38.00', '33.63', '4.37', '0.00'],
    ['discount to zero', '1', '10', '13', '10', '0.00', '0.00', '0.00', '0.00'],
    ['fractional quantity, half cent rounded up', '2.5', '3.99', '13', '0', '9.98', '8.83', '1.15', '0.00'],
    ['four-decimal quantity and price', '1.3333', '0.0333', '13', '0', '0.04', '0.04', '0.00', '0.00'],
    ['one cent at 13 %', '1', '0.01', '13', '0', '0.01', '0.01', '0.00', '0.00'],
    ['one cent at 100 %: 0.005 rounds up', '1', '0.01', '100', '0', '0.01', '0.01', '0.00', '0.00'],
    ['three cents at 100 %: 0.015 rounds up', '1', '0.03', '100', '0', '0.03', '0.02', '0.01', '0.00'],
    ['fractional rate 12.5 %', '3', '7.77', '12.5', '0', '23.31', '20.72', '2.59', '0.00'],
    ['tiny quantity rounds to nothing', '0.0001', '0.01', '13', '0', '0.00', '0.00', '0.00', '0.00'],
    ['large amounts stay exact', '999999999', '9999.99', '13', '0', '9999989990000.01', '8849548663716.82', '1150441326283.19', '0.00'],
  ])('%s', (_name, cantidad, precio, rate, descuento, total, subTotal, iva, exenta) => {
    expect(line(cantidad, precio, rate, descuento)).toMatchObject({ total, sub_total: subTotal, iva, exenta });
  });

  it('keeps total = sub_total + iva exactly and sub_total within half a cent of T / (1 + rate) for many lines', () => {
    let seed = 7;
    const next = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    for (let i = 0; i < 2000; i++) {
      const cantidad = new Decimal(next(100000) + 1).div(100).toFixed();
      const precio = new Decimal(next(1000000)).div(100).toFixed();
      const rate = ['0', '5', '10', '12.5', '13', '15', '16', '19', '21', '100'][next(10)]!;
      const l = line(cantidad, precio, rate);
      expect(new Decimal(l.sub_total).plus(l.iva).toFixed(2)).toBe(l.total);
      const exact = new Decimal(l.total).div(new Decimal(rate).div(100).plus(1));
      expect(exact.minus(l.sub_total).abs().lte('0.005')).toBe(true);
      expect(new Decimal(l.iva).isNegative()).toBe(false);
    }
  });

  it('refuses a discount above the line amount', () => {
    expect(taxLine({ cantidad: '1', precio: '5', descuento: '5.01', porcentaje_impuesto: '13' })).toEqual({
      ok: false,
      field: 'descuento',
      message: 'El descuento (5.01) supera el importe de la línea (5.00)',
    });
  });
});

describe('resolveRate', () => {
  it('takes the line rate first, even 0', () => expect(resolveRate('0', '5', '13')).toBe('0'));
  it('then the product rate', () => expect(resolveRate(undefined, '5.0000', '13')).toBe('5'));
  it('then the company rate', () => expect(resolveRate(undefined, null, '15')).toBe('15'));
  it('then 13', () => expect(resolveRate(undefined, null, null)).toBe('13'));
});

describe('ventaTotals', () => {
  it('sums the lines so total = sub_total + iva holds for the sale', () => {
    const lines: TaxedLine[] = [line('1', '649.99', '13'), line('2', '19.95', '13', '1.9'), line('4', '12', '0'), line('20', '9.85', '5')];
    expect(ventaTotals(lines)).toEqual({ sub_total: '844.46', iva: '88.53', total: '932.99', descuento: '1.90', exenta: '48.00' });
  });

  it('is all zeros without lines', () => {
    expect(ventaTotals([])).toEqual({ sub_total: '0.00', iva: '0.00', total: '0.00', descuento: '0.00', exenta: '0.00' });
  });
});
