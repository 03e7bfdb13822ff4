import { RETURN_QUANTITY_SCALE, type ErrorDetails, type ReturnLineRequest, type ReturnableSale, type TipoDevolucion } from '@erp/contracts';
import { Decimal, cents, fromNumber, sum, toCents } from '@erp/contracts';

export type DetalleVenta = ReturnableSale['detalles'][number];

/** One line of the return to write: a share of one sale line. Decimals are exact strings. */
export interface PlannedLine {
  detalleVenta: DetalleVenta;
  cantidad: string;
  /** Unit price credited: the sale's, or the one asked for. */
  precio: string;
  costo: string;
  descuento: string;
  porcentaje_impuesto: string;
  sub_total: string;
  iva: string;
  total: string;
  exenta: string;
  mueve_stock: boolean;
}

export interface ReturnTotals {
  sub_total: string;
  iva: string;
  total: string;
  descuento: string;
  exenta: string;
}

export interface ReturnPlan {
  lines: PlannedLine[];
  totals: ReturnTotals;
  /** Stock to put back in the sale's warehouse, per product in order of first appearance; empty for `descuento_ajuste`. */
  stock: Array<{ id_producto: number; cantidad: string }>;
}

export type PlanResult = { ok: true; plan: ReturnPlan } | { ok: false; message: string; details: ErrorDetails };

export interface PlanInput {
  tipo: TipoDevolucion;
  detallesVenta: readonly DetalleVenta[];
  /** Sale line id → quantity that active returns already took back. */
  returned: ReadonlyMap<number, string>;
  requested: readonly ReturnLineRequest[];
}

const q3 = (value: Decimal) => value.toFixed(RETURN_QUANTITY_SCALE);

/**
 * What a sale line took from stock, and so what its returns can give back: its quantity (up to
 * four decimals) rounded half up to the stock's three, as inventory moved it. A line of 1.0005
 * took 1.001: returning 1.001 returns the whole line, stock and money, with no residue under 0.001.
 */
export const returnableQuantity = (line: Pick<DetalleVenta, 'cantidad'>): Decimal =>
  new Decimal(line.cantidad).toDecimalPlaces(RETURN_QUANTITY_SCALE, Decimal.ROUND_HALF_UP);

/** Records a problem of a field of the request. */
type Problem = (key: string, message: string) => void;

/** A share of one sale line that one requested line (at `index`) takes. */
interface Piece {
  line: DetalleVenta;
  cantidad: Decimal;
  /** Unit price credited, when asked for. */
  precio?: string;
  index: number;
}

/**
 * Plans a return from a sale's lines. Each requested quantity comes from one sale line (by id)
 * or from the sale's lines of a product in order, never more than sold minus what active returns
 * (and earlier lines of this request) took. Amounts are shares of the sale line: the amount of a
 * share is the rounded cumulative amount after it minus the rounded cumulative amount before it,
 * so the returns of a whole line add up to its total, tax and discount to the cent, and
 * `total = sub_total + iva` holds for every line. A credited `precio` replaces the share's amount
 * (at most the share of the line's total) and is taxed at the line's rate.
 */
export function planDevolucion(input: PlanInput): PlanResult {
  const details: ErrorDetails = {};
  const problem: Problem = (key, message) => (details[key] ??= []).push(message);
  /** Quantity taken per sale line: active returns, then the pieces planned so far. */
  const taken = returnedBefore(input);

  const requested = requestedLines(input, taken);
  if (requested.length === 0) {
    const message = 'La venta ya fue devuelta por completo';
    return { ok: false, message, details: { detalles: [message] } };
  }
  const pieces = requested.flatMap((req, index) => takePieces(req, index, input.detallesVenta, taken, problem));
  if (Object.keys(details).length > 0) return { ok: false, message: summaryMessage(details), details };

  const lines = priceLines(pieces, input, problem);
  if (Object.keys(details).length > 0) return { ok: false, message: summaryMessage(details), details };
  return { ok: true, plan: { lines, totals: returnTotals(lines), stock: stockToPutBack(lines) } };
}

/** Quantity that active returns already took back, per sale line. */
function returnedBefore(input: PlanInput): Map<number, Decimal> {
  return new Map(input.detallesVenta.map((l) => [l.id, new Decimal(input.returned.get(l.id) ?? 0)]));
}

/** What is left to return of a sale line once `taken` is back. */
const leftOf = (line: DetalleVenta, taken: ReadonlyMap<number, Decimal>): Decimal =>
  Decimal.max(returnableQuantity(line).minus(taken.get(line.id)!), 0);

/** The lines requested. Annulling the invoice without lines returns whatever is left of each line. */
function requestedLines(input: PlanInput, taken: ReadonlyMap<number, Decimal>): readonly ReturnLineRequest[] {
  if (input.requested.length > 0 || input.tipo !== 'anulacion_factura') return input.requested;
  return input.detallesVenta.flatMap((l) => {
    const rest = leftOf(l, taken).toDecimalPlaces(RETURN_QUANTITY_SCALE, Decimal.ROUND_DOWN);
    return rest.gt(0) ? [{ id_detalle: l.id, cantidad: rest.toNumber() }] : [];
  });
}

/**
 * The pieces one requested line takes: from the sale line its `id_detalle` names, or from the sale's
 * lines of its product in order, each up to what is left of it. What it takes is added to `taken`.
 */
function takePieces(
  req: ReturnLineRequest,
  index: number,
  detallesVenta: readonly DetalleVenta[],
  taken: Map<number, Decimal>,
  problem: Problem,
): Piece[] {
  const candidates =
    req.id_detalle !== undefined
      ? detallesVenta.filter((l) => l.id === req.id_detalle)
      : detallesVenta.filter((l) => l.id_producto === req.id_producto);
  if (candidates.length === 0) {
    if (req.id_detalle !== undefined) problem(`detalles.${index}.id_detalle`, `La línea ${req.id_detalle} no pertenece a la venta`);
    else problem(`detalles.${index}.id_producto`, `El producto ${req.id_producto} no está en la venta`);
    return [];
  }
  let wanted = new Decimal(fromNumber(req.cantidad));
  const available = sum(candidates.map((l) => leftOf(l, taken)));
  if (wanted.gt(available)) {
    const vendido = sum(candidates.map(returnableQuantity));
    problem(
      `detalles.${index}.cantidad`,
      `Excede lo que queda por devolver: vendido ${vendido.toFixed()}, ya devuelto ${vendido.minus(available).toFixed()}, disponible ${available.toFixed()}`,
    );
    return [];
  }
  const pieces: Piece[] = [];
  for (const line of candidates) {
    if (wanted.isZero()) break;
    const piece = Decimal.min(wanted, leftOf(line, taken));
    if (piece.isZero()) continue;
    pieces.push({ line, cantidad: piece, index, ...(req.precio !== undefined ? { precio: fromNumber(req.precio) } : {}) });
    taken.set(line.id, taken.get(line.id)!.plus(piece));
    wanted = wanted.minus(piece);
  }
  return pieces;
}

/** The lines of the pieces, in order: each piece's amounts are shares of its sale line from the quantity taken before it. */
function priceLines(pieces: readonly Piece[], input: PlanInput, problem: Problem): PlannedLine[] {
  const before = returnedBefore(input);
  return pieces.flatMap((piece) => {
    const from = before.get(piece.line.id)!;
    before.set(piece.line.id, from.plus(piece.cantidad));
    return priceLine(piece, from, input.tipo, problem) ?? [];
  });
}

/** The line of one piece, once `from` of its sale line was taken before it; a credited `precio` above its share is refused. */
function priceLine(piece: Piece, from: Decimal, tipo: TipoDevolucion, problem: Problem): PlannedLine | undefined {
  const { line, cantidad, precio, index } = piece;
  const rate = new Decimal(line.porcentaje_impuesto);
  let { total, subTotal, descuento } = shareOf(line, from, from.plus(cantidad));
  if (precio !== undefined) {
    const credited = toCents(cantidad.times(precio));
    if (credited.gt(total)) {
      problem(
        `detalles.${index}.precio`,
        `Excede el precio efectivo de la línea de la venta: como máximo ${total.toFixed(2)} por ${cantidad.toFixed()} unidades`,
      );
      return undefined;
    }
    total = credited;
    subTotal = rate.isZero() ? credited : toCents(credited.div(rate.div(100).plus(1)));
    descuento = new Decimal(0);
  }
  return {
    detalleVenta: line,
    cantidad: q3(cantidad),
    precio: precio ?? line.precio,
    costo: line.costo,
    descuento: descuento.toFixed(2),
    porcentaje_impuesto: line.porcentaje_impuesto,
    sub_total: subTotal.toFixed(2),
    iva: total.minus(subTotal).toFixed(2),
    total: total.toFixed(2),
    exenta: rate.isZero() ? total.toFixed(2) : '0.00',
    mueve_stock: line.mueve_stock && tipo !== 'descuento_ajuste',
  };
}

/**
 * The amounts of a sale line between the quantities `from` and `to` returned of it, in cents. Once
 * all it took from stock is back, the whole line is (its quantity may have a fourth decimal the stock has not).
 */
function shareOf(line: DetalleVenta, from: Decimal, to: Decimal): { total: Decimal; subTotal: Decimal; descuento: Decimal } {
  const whole = returnableQuantity(line);
  const part = (taken: Decimal) => (taken.gte(whole) ? new Decimal(line.cantidad) : Decimal.min(taken, line.cantidad));
  const share = (amount: string) =>
    toCents(new Decimal(amount).times(part(to)).div(line.cantidad)).minus(
      toCents(new Decimal(amount).times(part(from)).div(line.cantidad)),
    );
  return { total: share(line.total), subTotal: share(line.sub_total), descuento: share(line.descuento) };
}

function returnTotals(lines: readonly PlannedLine[]): ReturnTotals {
  return {
    sub_total: cents(sum(lines.map((l) => l.sub_total))),
    iva: cents(sum(lines.map((l) => l.iva))),
    total: cents(sum(lines.map((l) => l.total))),
    descuento: cents(sum(lines.map((l) => l.descuento))),
    exenta: cents(sum(lines.map((l) => l.exenta))),
  };
}

/** Stock to put back per product, in order of first appearance, from the lines that move it. */
function stockToPutBack(lines: readonly PlannedLine[]): ReturnPlan['stock'] {
  const stock = new Map<number, Decimal>();
  for (const l of lines)
    if (l.mueve_stock) stock.set(l.detalleVenta.id_producto, (stock.get(l.detalleVenta.id_producto) ?? new Decimal(0)).plus(l.cantidad));
  return [...stock].filter(([, qty]) => qty.gt(0)).map(([id_producto, qty]) => ({ id_producto, cantidad: q3(qty) }));
}

/** One sentence for the error envelope: the first problem, and how many more there are. */
export function summaryMessage(details: ErrorDetails): string {
  const entries = Object.entries(details);
  const [key, messages] = entries[0] ?? ['detalles', ['La devolución no es válida']];
  const more = entries.length - 1;
  return `${key}: ${messages[0]}${more > 0 ? ` (y ${more} problema${more === 1 ? '' : 's'} más)` : ''}`;
}

/** Sale states a return can be made from: the ones that took stock and are not annulled. */
export function ventaProblem(estado: ReturnableSale['estado']): string | undefined {
  if (estado === 'Cotizacion') return 'Una cotización no se puede devolver';
  if (estado === 'Anulada') return 'La venta está anulada';
  return undefined;
}
