import { Decimal, STOCK_SCALE, toStock } from '@erp/contracts';

const text = (value: Decimal) => value.toFixed(STOCK_SCALE);

export interface RequestedLine {
  id_producto: number;
  cantidad: string;
}

export interface AggregatedLine {
  productoId: number;
  /** Sum of the product's lines, rounded to the stock scale. */
  cantidad: string;
  /** Positions of the request lines that asked for this product (for error details). */
  lineIndexes: number[];
}

/** One entry per product, in order of first appearance: a sale may list a product twice. */
export function aggregateLines(lines: readonly RequestedLine[]): AggregatedLine[] {
  const byProduct = new Map<number, { total: Decimal; lineIndexes: number[] }>();
  lines.forEach((line, index) => {
    const entry = byProduct.get(line.id_producto) ?? { total: new Decimal(0), lineIndexes: [] };
    entry.total = entry.total.plus(toStock(line.cantidad));
    entry.lineIndexes.push(index);
    byProduct.set(line.id_producto, entry);
  });
  return [...byProduct].map(([productoId, { total, lineIndexes }]) => ({ productoId, cantidad: text(total), lineIndexes }));
}

export interface StockKey {
  productoId: number;
  bodegaId: number;
}

export interface PlannedMove extends StockKey {
  /** Signed change: negative takes stock out. */
  cantidad: string;
  stockResultante: string;
}

export interface Shortfall extends StockKey {
  disponible: string;
  solicitado: string;
  lineIndexes: number[];
}

export interface Plan {
  moves: PlannedMove[];
  shortfalls: Shortfall[];
}

/**
 * Takes the aggregated lines out of one warehouse. With `allowNegative` false, a line whose
 * quantity exceeds the stock (missing entries count as 0) is a shortfall; the plan is all or
 * nothing, so the caller moves nothing when any shortfall is reported.
 */
export function planTake(
  lines: readonly AggregatedLine[],
  bodegaId: number,
  stockOf: (productoId: number) => string | undefined,
  allowNegative: boolean,
): Plan {
  const moves: PlannedMove[] = [];
  const shortfalls: Shortfall[] = [];
  for (const line of lines) {
    const wanted = new Decimal(line.cantidad);
    if (wanted.isZero()) continue;
    const current = new Decimal(stockOf(line.productoId) ?? '0');
    const after = current.minus(wanted);
    if (!allowNegative && after.isNegative()) {
      shortfalls.push({
        productoId: line.productoId,
        bodegaId,
        disponible: text(current),
        solicitado: line.cantidad,
        lineIndexes: line.lineIndexes,
      });
      continue;
    }
    moves.push({ productoId: line.productoId, bodegaId, cantidad: text(wanted.negated()), stockResultante: text(after) });
  }
  return { moves, shortfalls };
}

/** Puts the aggregated lines back into one warehouse (a release). */
export function planReturn(
  lines: readonly AggregatedLine[],
  bodegaId: number,
  stockOf: (productoId: number) => string | undefined,
): PlannedMove[] {
  return lines
    .filter((line) => !new Decimal(line.cantidad).isZero())
    .map((line) => {
      const current = new Decimal(stockOf(line.productoId) ?? '0');
      return { productoId: line.productoId, bodegaId, cantidad: line.cantidad, stockResultante: text(current.plus(line.cantidad)) };
    });
}

export interface AjusteLine extends StockKey {
  /** Relative, signed. */
  cantidad?: string;
  /** Absolute. */
  stock?: string;
  lineIndex: number;
}

/**
 * Relative changes add to the stock; absolute ones set it (moving the difference, nothing when
 * it already has that value). A decrease that would leave the stock below zero is a shortfall
 * unless `allowNegative`; increases and absolute values are never refused.
 */
export function planAjuste(lines: readonly AjusteLine[], stockOf: (key: StockKey) => string | undefined, allowNegative: boolean): Plan {
  const moves: PlannedMove[] = [];
  const shortfalls: Shortfall[] = [];
  for (const line of lines) {
    const current = new Decimal(stockOf(line) ?? '0');
    const delta = line.cantidad !== undefined ? toStock(line.cantidad) : toStock(line.stock ?? '0').minus(current);
    if (delta.isZero()) continue;
    const after = current.plus(delta);
    if (line.cantidad !== undefined && delta.isNegative() && after.isNegative() && !allowNegative) {
      shortfalls.push({
        productoId: line.productoId,
        bodegaId: line.bodegaId,
        disponible: text(current),
        solicitado: text(delta.negated()),
        lineIndexes: [line.lineIndex],
      });
      continue;
    }
    moves.push({ productoId: line.productoId, bodegaId: line.bodegaId, cantidad: text(delta), stockResultante: text(after) });
  }
  return { moves, shortfalls };
}

/** `lineas.N.cantidad` → message, for every request line of every shortfall. */
export function shortfallDetails(shortfalls: readonly Shortfall[], codigoOf: (productoId: number) => string): Record<string, string[]> {
  const details: Record<string, string[]> = {};
  for (const s of shortfalls) {
    const message = `Stock insuficiente para el producto ${codigoOf(s.productoId)}: disponible ${trim(s.disponible)}, solicitado ${trim(s.solicitado)}`;
    for (const index of s.lineIndexes) (details[`lineas.${index}.cantidad`] ??= []).push(message);
  }
  return details;
}

/** "5.000" → "5", "2.500" → "2.5": quantities as people write them. */
export function trim(value: string): string {
  return new Decimal(value).toString();
}
