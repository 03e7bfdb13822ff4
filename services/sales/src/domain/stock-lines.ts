import { Decimal, PLATAFORMAS, STOCK_SCALE, platformOrderId, toStock, type CausaStock } from '@erp/contracts';

/**
 * The cause every stock movement of a sale names (`stock.changed`): the sale, and for one made
 * from a platform order (its `origen` is the platform, its `referencia_externa` the order's) that
 * order too.
 */
export function ventaStockCause(venta: { id: number; origen: string; referencia_externa: string | null }): CausaStock {
  const plataforma = PLATAFORMAS.find((p) => p === venta.origen);
  const idPedido = plataforma && venta.referencia_externa !== null ? platformOrderId(plataforma, venta.referencia_externa) : undefined;
  return {
    id_venta: venta.id,
    ...(plataforma ? { plataforma } : {}),
    ...(idPedido !== undefined ? { id_pedido_plataforma: idPedido } : {}),
  };
}

/** Stock per product and warehouse, keyed `producto:bodega`, at the stock scale. */
export type StockHolding = Map<string, { id_producto: number; id_bodega: number; cantidad: Decimal }>;

/** One relative change of inventory: negative takes stock, positive gives it back. */
export interface StockMove {
  id_producto: number;
  id_bodega: number;
  /** Signed, with three decimals. */
  cantidad: string;
}

/**
 * What a sale holds of inventory: the stock-moving lines of a Completada or Pendiente sale, in its
 * warehouse, each line rounded as inventory rounds it; a quotation or an annulled sale holds nothing.
 */
export function heldStock(
  holds: boolean,
  bodegaId: number,
  lines: ReadonlyArray<{ id_producto: number; cantidad: string; mueve_stock: boolean }>,
): StockHolding {
  const held: StockHolding = new Map();
  if (!holds) return held;
  for (const line of lines) {
    if (!line.mueve_stock) continue;
    const key = `${line.id_producto}:${bodegaId}`;
    const qty = toStock(line.cantidad);
    const entry = held.get(key);
    if (entry) entry.cantidad = entry.cantidad.plus(qty);
    else held.set(key, { id_producto: line.id_producto, id_bodega: bodegaId, cantidad: qty });
  }
  return held;
}

/**
 * The inventory changes that turn what a sale held into what it will hold, per product and
 * warehouse: 5 held and 3 to hold gives +2 back; a warehouse change gives the whole quantity back
 * to one warehouse and takes it from the other. Unchanged pairs are left out.
 */
export function stockDiff(before: StockHolding, after: StockHolding): StockMove[] {
  const moves: StockMove[] = [];
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(key);
    const will = after.get(key);
    const delta = (was?.cantidad ?? new Decimal(0)).minus(will?.cantidad ?? 0);
    if (delta.isZero()) continue;
    const { id_producto, id_bodega } = (was ?? will)!;
    moves.push({ id_producto, id_bodega, cantidad: delta.toFixed(STOCK_SCALE) });
  }
  return moves;
}

/**
 * What is still to move after inventory answered that a key was already applied with `applied`
 * (by an attempt whose transaction never committed): the wanted moves minus those.
 */
export function remainingMoves(
  wanted: readonly StockMove[],
  applied: ReadonlyArray<{ id_producto: number; id_bodega: number; cantidad: string }>,
): StockMove[] {
  const totals = new Map<string, { id_producto: number; id_bodega: number; cantidad: Decimal }>();
  const add = (m: { id_producto: number; id_bodega: number }, qty: Decimal) => {
    const key = `${m.id_producto}:${m.id_bodega}`;
    const entry = totals.get(key);
    if (entry) entry.cantidad = entry.cantidad.plus(qty);
    else totals.set(key, { id_producto: m.id_producto, id_bodega: m.id_bodega, cantidad: qty });
  };
  for (const m of wanted) add(m, new Decimal(m.cantidad));
  for (const m of applied) add(m, new Decimal(m.cantidad).negated());
  return [...totals.values()]
    .filter((m) => !m.cantidad.isZero())
    .map((m) => ({ id_producto: m.id_producto, id_bodega: m.id_bodega, cantidad: m.cantidad.toFixed(STOCK_SCALE) }));
}
