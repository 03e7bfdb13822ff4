import DecimalJs from 'decimal.js';

/**
 * The one decimal configuration for money and quantities. 60 significant digits keep every
 * product of a quantity (13 digits) and a price (16 digits) exact, and a division by (1 + rate)
 * close enough that rounding it to cents is never off: a quotient that is not exactly on a half
 * cent is at least 1/(200·d) away from one, far above 10^-50.
 */
export const Decimal = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Decimal = DecimalJs;
export type DecimalValue = DecimalJs.Value;

/** Money: rounded half up to cents. */
export const toCents = (value: DecimalValue): Decimal => new Decimal(value).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

/** Money as a plain decimal string with two places. */
export const cents = (value: DecimalValue): string => toCents(value).toFixed(2);

/** A JSON number as the exact decimal it was written as (its shortest representation). */
export const fromNumber = (value: number): string => new Decimal(String(value)).toFixed();

export const sum = (values: readonly DecimalValue[]): Decimal => values.reduce<Decimal>((acc, v) => acc.plus(v), new Decimal(0));

/** Stock is kept with three decimals; a quantity is rounded to them (half up) before it moves. */
export const STOCK_SCALE = 3;

/** A quantity rounded to the stock scale, half up. */
export const toStock = (value: DecimalValue): Decimal => new Decimal(value).toDecimalPlaces(STOCK_SCALE, Decimal.ROUND_HALF_UP);

/** Sums over one group of documents (the sales of a state, the returns of a type), as exact decimal strings. */
export interface DocumentTotals<G extends string> {
  grupo: G;
  cantidad: number;
  total: string;
  iva: string;
  descuento: string;
}

/**
 * A summary of documents from per-group sums: totals are the sums of the groups, the average is
 * total / count to the cent (0 without documents), and every group asked for is listed, with
 * zeros when it has no documents, in the order of `grupos`.
 */
export function summarizeDocuments<G extends string>(rows: readonly DocumentTotals<G>[], grupos: readonly G[]) {
  const cantidad = rows.reduce((n, r) => n + r.cantidad, 0);
  const total = sum(rows.map((r) => r.total));
  return {
    cantidad,
    total: cents(total),
    iva: cents(sum(rows.map((r) => r.iva))),
    descuentos: cents(sum(rows.map((r) => r.descuento))),
    promedio: cantidad === 0 ? '0.00' : cents(total.div(cantidad)),
    grupos: grupos.map((grupo) => {
      const row = rows.find((r) => r.grupo === grupo);
      return { grupo, cantidad: row?.cantidad ?? 0, total: cents(row ? row.total : 0) };
    }),
  };
}
