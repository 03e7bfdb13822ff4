import DecimalJs from 'decimal.js';

/**
 * Decimal arithmetic for money and quantities: 60 significant digits keep every product and
 * share of a sale line exact enough that rounding it to cents is never off.
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
