import { Decimal } from './money';

/** Inventory keeps stock with three decimals and rounds each requested line to them (half up). */
export const STOCK_SCALE = 3;

/**
 * The stock a sale's lines took, one entry per product in order of first appearance, each line
 * rounded as inventory rounded it when it was reserved: what an annulment gives back.
 */
export function stockToReturn(lines: ReadonlyArray<{ id_producto: number; cantidad: string }>): Array<{ id_producto: number; cantidad: string }> {
  const byProduct = new Map<number, Decimal>();
  for (const line of lines) {
    const qty = new Decimal(line.cantidad).toDecimalPlaces(STOCK_SCALE, Decimal.ROUND_HALF_UP);
    byProduct.set(line.id_producto, (byProduct.get(line.id_producto) ?? new Decimal(0)).plus(qty));
  }
  return [...byProduct].filter(([, qty]) => qty.gt(0)).map(([id_producto, qty]) => ({ id_producto, cantidad: qty.toFixed(STOCK_SCALE) }));
}
