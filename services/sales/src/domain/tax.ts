import { Decimal, cents, sum } from '@erp/contracts';

/** Rate when neither the line, the product nor the company gives one (DESIGN §4). */
export const DEFAULT_TAX_RATE = '13';

/** The line's rate, else the product's, else the company's, else 13. */
export function resolveRate(line: string | undefined, product: string | null | undefined, company: string | null | undefined): string {
  for (const candidate of [line, product, company]) {
    if (candidate !== undefined && candidate !== null && candidate.trim() !== '') return new Decimal(candidate).toFixed();
  }
  return DEFAULT_TAX_RATE;
}

export interface LineAmounts {
  /** Exact decimal strings. */
  cantidad: string;
  /** Unit price including tax. */
  precio: string;
  descuento: string;
  porcentaje_impuesto: string;
}

export interface TaxedLine extends LineAmounts {
  /** Line total including tax: cantidad × precio − descuento, in cents. */
  total: string;
  sub_total: string;
  iva: string;
  /** The total of a line at rate 0, else 0. */
  exenta: string;
}

export type LineResult = { ok: true; line: TaxedLine } | { ok: false; field: 'descuento'; message: string };

/**
 * Tax of one line with tax-inclusive prices: T = cantidad × precio − descuento (≥ 0, rounded
 * half up to cents: a fractional quantity can give sub-cent amounts), sub_total =
 * round(T / (1 + rate/100), 2), iva = T − sub_total, so sub_total + iva = T exactly. A line at
 * rate 0 is exempt: no tax, all of it `exenta`.
 */
export function taxLine(input: LineAmounts): LineResult {
  const gross = new Decimal(input.cantidad).times(input.precio);
  const net = gross.minus(input.descuento);
  if (net.isNegative()) {
    return {
      ok: false,
      field: 'descuento',
      message: `El descuento (${new Decimal(input.descuento).toFixed(2)}) supera el importe de la línea (${cents(gross)})`,
    };
  }
  const total = new Decimal(cents(net));
  const rate = new Decimal(input.porcentaje_impuesto);
  const base = {
    cantidad: new Decimal(input.cantidad).toFixed(),
    precio: new Decimal(input.precio).toFixed(),
    descuento: cents(input.descuento),
    porcentaje_impuesto: rate.toFixed(),
    total: total.toFixed(2),
  };
  if (rate.isZero()) return { ok: true, line: { ...base, sub_total: total.toFixed(2), iva: '0.00', exenta: total.toFixed(2) } };
  const subTotal = new Decimal(cents(total.div(rate.div(100).plus(1))));
  return { ok: true, line: { ...base, sub_total: subTotal.toFixed(2), iva: total.minus(subTotal).toFixed(2), exenta: '0.00' } };
}

export interface VentaTotals {
  sub_total: string;
  iva: string;
  total: string;
  descuento: string;
  exenta: string;
}

/** The sale's amounts are the sums of its lines, so total = sub_total + iva holds for the sale too. */
export function ventaTotals(lines: readonly TaxedLine[]): VentaTotals {
  const of = (key: keyof TaxedLine) => sum(lines.map((l) => l[key])).toFixed(2);
  return { sub_total: of('sub_total'), iva: of('iva'), total: of('total'), descuento: of('descuento'), exenta: of('exenta') };
}
