import { Decimal, cents } from '@erp/contracts';

/** Platform amounts and quantities are read to four decimals, half up (away from zero). */
const SCALE = 4;

/**
 * A platform amount or quantity (a JSON number or a plain decimal string) as an exact decimal
 * rounded to four places; null when it is neither.
 */
export function parseAmount(value: unknown): Decimal | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!/^-?\d+(?:\.\d+)?$/.test(text)) return null;
  const amount = new Decimal(text).toDecimalPlaces(SCALE, Decimal.ROUND_HALF_UP);
  return amount.isZero() ? new Decimal(0) : amount;
}

/** A quantity as its shortest decimal text (`2`, `1.5`). */
export const quantityText = (cantidad: Decimal): string => cantidad.toFixed();

/** A quantity with the four places it was read to (`2.0000`). */
export const quantityFixed = (cantidad: Decimal): string => cantidad.toFixed(SCALE);

/**
 * Splits a line total into a unit price (2 decimals, rounded up) and a discount, so that
 * quantity × price − discount is exactly the total the platform charged for the line.
 */
export function unitPriceAndDiscount(lineTotal: Decimal, quantity: Decimal): { precio: string; descuento: string } {
  if (quantity.lte(0) || lineTotal.lte(0)) return { precio: '0.00', descuento: '0.00' };
  const precio = lineTotal.div(quantity).toDecimalPlaces(2, Decimal.ROUND_UP);
  const descuento = precio.times(quantity).toDecimalPlaces(SCALE, Decimal.ROUND_DOWN).minus(lineTotal);
  return { precio: cents(precio), descuento: cents(descuento) };
}
