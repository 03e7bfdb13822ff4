import { AppError, type ParsedRequestOf, type Reservation, type inventorySubjects } from '@erp/contracts';
import type { Transaction } from 'kysely';
import { findReserva, findReservas, insertReserva, insertReservas, setReservaEstado, type ReservaRow } from '../db/reserva.repository';
import {
  applyMoves,
  applyMovesInOrder,
  findBodega,
  findBodegas,
  findStockProductos,
  lockStock,
  lockedStockOf,
  type StockProducto,
} from '../db/stock.repository';
import type { InventoryDb, ReservaLinea } from '../db/tables';
import { checkBodega } from '../domain/resolve-product';
import { confirmTransition, releaseTransition } from '../domain/reservation';
import {
  aggregateLines,
  planReturn,
  planTake,
  shortfallDetails,
  type AggregatedLine,
  type PlannedMove,
  type Shortfall,
} from '../domain/stock-plan';

type ReserveRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.stock.reserve'>;

export interface ReserveOptions {
  empresaId: number;
  /** The company's "sell without stock" setting, unless the request overrides it. */
  allowNegative: boolean;
  /** When the sweeper first asks the origin about the reservation. */
  checkAfterMs: number;
}

function toReply(row: ReservaRow, aplicado: boolean): Reservation {
  return {
    clave: row.clave,
    estado: row.estado,
    origen: row.origen as Reservation['origen'],
    id_bodega: row.bodega_id,
    lineas: row.lineas,
    aplicado,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const stockLineas = (lineas: readonly ReservaLinea[]): AggregatedLine[] =>
  lineas.filter((l) => l.mueve_stock).map((l) => ({ productoId: l.id_producto, cantidad: l.cantidad, lineIndexes: [] }));

const sameLineas = (a: readonly ReservaLinea[], b: readonly ReservaLinea[]) =>
  a.length === b.length && a.every((l, i) => l.id_producto === b[i]!.id_producto && l.cantidad === b[i]!.cantidad);

/** A replay of a key answers what was recorded; the same key for different lines is a caller's bug. */
function replay(existing: ReservaRow, bodegaId: number, lineas: readonly ReservaLinea[]): Reservation {
  const tombstone = existing.estado === 'liberada' && existing.bodega_id === null;
  if (!tombstone && (existing.bodega_id !== bodegaId || !sameLineas(existing.lineas, lineas))) {
    throw new AppError('CONFLICT', `La clave ${existing.clave} ya se usó para otra reserva`);
  }
  return toReply(existing, false);
}

/**
 * Takes stock for the lines under the request's key, all or nothing, in the caller's
 * transaction. The entries are locked in a fixed order before they are read, so concurrent
 * reservations queue on the same rows and the check sees what the others left.
 */
export async function reserveStock(trx: Transaction<InventoryDb>, req: ReserveRequest, options: ReserveOptions): Promise<Reservation> {
  const { empresaId } = options;
  const aggregated = aggregateLines(req.lineas);
  // Read with the first two steps of the writers' lock order (see lockStock), so taking the stock
  // below needs only its entries.
  const bodegaRow = await findBodega(trx, empresaId, req.id_bodega, { lock: true });
  const bodega = checkBodega(req.id_bodega, bodegaRow);
  const productos = await findStockProductos(
    trx,
    empresaId,
    aggregated.map((l) => l.productoId),
    { lock: true },
  );
  const lineas = reservaLineas(aggregated, productos);

  // Recorded first (a key seen before answers what it recorded, whatever changed since); the
  // checks below roll the row back with everything else when they refuse.
  const inserted =
    bodegaRow &&
    (await insertReserva(trx, {
      empresaId,
      clave: req.clave,
      origen: req.origen,
      causa: req.causa,
      bodegaId: req.id_bodega,
      estado: 'reservada',
      lineas,
      revisarEnMs: options.checkAfterMs,
    }));
  if (!inserted) {
    const existing = await findReserva(trx, empresaId, req.clave);
    if (existing) return replay(existing, req.id_bodega, lineas);
  }

  const invalid = invalidReserva(req, productos, bodega);
  if (invalid) throw invalid;
  if (!inserted) throw AppError.validation('La reserva tiene datos inválidos', {}, 'producto_no_encontrado');

  const moving = movingLineas(aggregated, productos);
  const keys = moving.map((l) => ({ productoId: l.productoId, bodegaId: req.id_bodega }));
  const allowNegative = req.permitir_sin_stock ?? options.allowNegative;
  const locked = await lockStock(trx, empresaId, keys, { create: allowNegative, heldLugaresAndProductos: true });
  const stockOf = lockedStockOf(locked);
  const plan = planTake(moving, req.id_bodega, (productoId) => stockOf({ productoId, bodegaId: req.id_bodega }), allowNegative);
  if (plan.shortfalls.length > 0) throw shortfallError(plan.shortfalls, productos);
  await applyMoves(trx, empresaId, locked, plan.moves, reservaMeta(req));
  return toReply(inserted, true);
}

/**
 * Takes stock for many reservations in one transaction, decided in the order given as if each
 * were `reserveStock` after the one before it committed: each all or nothing under its own key,
 * each seeing what those before it left; a refusal is that reservation's result (the error
 * `reserveStock` throws for it) and takes nothing. Locks once for all of them in the writers'
 * order (their warehouses, their products by id, their entries by product and warehouse).
 */
export async function reserveStockMany(
  trx: Transaction<InventoryDb>,
  reqs: readonly ReserveRequest[],
  options: ReserveOptions,
): Promise<Array<{ clave: string; reserva: Reservation } | { clave: string; error: AppError }>> {
  const { empresaId } = options;
  const aggregated = reqs.map((req) => aggregateLines(req.lineas));
  const bodegaRows = await findBodegas(
    trx,
    empresaId,
    reqs.map((req) => req.id_bodega),
    { lock: true },
  );
  const productos = await findStockProductos(
    trx,
    empresaId,
    aggregated.flatMap((lineas) => lineas.map((l) => l.productoId)),
    { lock: true },
  );
  const existing = await findReservas(
    trx,
    empresaId,
    reqs.map((req) => req.clave),
  );

  // A key seen before answers what it recorded, whatever changed since (as `reserveStock` does).
  const replayed = (seen: ReservaRow, i: number): { reserva: Reservation } | { error: AppError } => {
    try {
      return { reserva: replay(seen, reqs[i]!.id_bodega, reservaLineas(aggregated[i]!, productos)) };
    } catch (err) {
      return { error: err as AppError };
    }
  };
  const checked = reqs.map((req, i): { invalid: AppError } | { moving: AggregatedLine[]; allowNegative: boolean } => {
    const invalid = invalidReserva(req, productos, checkBodega(req.id_bodega, bodegaRows.get(req.id_bodega)));
    if (invalid) return { invalid };
    return { moving: movingLineas(aggregated[i]!, productos), allowNegative: req.permitir_sin_stock ?? options.allowNegative };
  });
  const keysOf = (i: number, moving: readonly AggregatedLine[]) =>
    moving.map((l) => ({ productoId: l.productoId, bodegaId: reqs[i]!.id_bodega }));
  const toLock = checked.flatMap((c, i) => ('moving' in c && !existing.has(reqs[i]!.clave) ? [{ i, ...c }] : []));
  const locked = await lockStock(
    trx,
    empresaId,
    toLock.flatMap(({ i, moving }) => keysOf(i, moving)),
    { create: toLock.flatMap(({ i, moving, allowNegative }) => (allowNegative ? keysOf(i, moving) : [])), heldLugaresAndProductos: true },
  );

  // In order: each sees the stock the ones before it left, and a key repeated answers its first.
  type Decision = { reserva: Reservation } | { error: AppError } | { repeats: number } | { moves: PlannedMove[] };
  const running = new Map([...locked].map(([key, entry]) => [key, entry.stock]));
  const takenBy = new Map<string, number>();
  const decisions = reqs.map((req, i): Decision => {
    const seen = existing.get(req.clave);
    if (seen) return replayed(seen, i);
    const first = takenBy.get(req.clave);
    if (first !== undefined) return { repeats: first };
    const c = checked[i]!;
    if ('invalid' in c) return { error: c.invalid };
    const plan = planTake(c.moving, req.id_bodega, (productoId) => running.get(`${productoId}:${req.id_bodega}`), c.allowNegative);
    if (plan.shortfalls.length > 0) return { error: shortfallError(plan.shortfalls, productos) };
    for (const move of plan.moves) running.set(`${move.productoId}:${move.bodegaId}`, move.stockResultante);
    takenBy.set(req.clave, i);
    return { moves: plan.moves };
  });

  const taken = [...takenBy.values()];
  const inserted = await insertReservas(
    trx,
    taken.map((i) => {
      const req = reqs[i]!;
      return {
        empresaId,
        clave: req.clave,
        origen: req.origen,
        causa: req.causa,
        bodegaId: req.id_bodega,
        estado: 'reservada' as const,
        lineas: reservaLineas(aggregated[i]!, productos),
        revisarEnMs: options.checkAfterMs,
      };
    }),
  );
  // A key recorded since it was looked up is a concurrent copy of this request: it answers alone.
  if (inserted.size !== taken.length) throw new AppError('CONFLICT', 'Otra solicitud registró a la vez alguna de estas claves');
  // As one reservation after another (each ledger row carries the stock its own reservation left),
  // in a few statements for all of them: the stock locks are held until commit.
  await applyMovesInOrder(
    trx,
    empresaId,
    locked,
    taken.map((i) => ({ moves: (decisions[i] as { moves: PlannedMove[] }).moves, meta: reservaMeta(reqs[i]!) })),
  );
  return decisions.map((d, i) => {
    const clave = reqs[i]!.clave;
    if ('repeats' in d) return { clave, ...replayed(inserted.get(clave)!, i) };
    if ('moves' in d) return { clave, reserva: toReply(inserted.get(clave)!, true) };
    return { clave, ...d };
  });
}

const reservaLineas = (aggregated: readonly AggregatedLine[], productos: Map<number, StockProducto>): ReservaLinea[] =>
  aggregated.map((l) => ({
    id_producto: l.productoId,
    cantidad: l.cantidad,
    mueve_stock: productos.get(l.productoId)?.tipo === 'Producto',
  }));

const movingLineas = (aggregated: readonly AggregatedLine[], productos: Map<number, StockProducto>) =>
  aggregated.filter((l) => productos.get(l.productoId)?.tipo === 'Producto');

const reservaMeta = (req: ReserveRequest) => ({
  tipo: 'reserva' as const,
  origen: req.origen,
  causa: req.causa,
  clave: req.clave,
  concepto: 'Reserva de stock',
});

/** The refusal of a reservation naming products or a warehouse that do not exist (or cannot hold stock). */
function invalidReserva(
  req: ReserveRequest,
  productos: Map<number, StockProducto>,
  bodega: ReturnType<typeof checkBodega>,
): AppError | undefined {
  const details: Record<string, string[]> = {};
  req.lineas.forEach((linea, i) => {
    if (!productos.has(linea.id_producto)) details[`lineas.${i}.id_producto`] = [`El producto ${linea.id_producto} no existe`];
  });
  if (!bodega.ok) details.id_bodega = [bodega.message];
  if (Object.keys(details).length === 0) return undefined;
  return AppError.validation(
    'La reserva tiene datos inválidos',
    details,
    bodega.ok ? 'producto_no_encontrado' : 'dato_relacionado_invalido',
  );
}

function shortfallError(shortfalls: readonly Shortfall[], productos: Map<number, StockProducto>): AppError {
  return AppError.rule(
    'stock_insuficiente',
    'Stock insuficiente y la empresa no permite vender sin stock',
    shortfallDetails(shortfalls, (id) => productos.get(id)?.codigo ?? String(id)),
  );
}

/**
 * Confirms a reservation. One released before (its sale committed after all) takes its stock
 * again, even below zero: the sale exists, so the stock is already gone.
 */
export async function confirmReserva(trx: Transaction<InventoryDb>, empresaId: number, clave: string): Promise<Reservation> {
  const row = await findReserva(trx, empresaId, clave, { lock: true });
  if (!row) throw AppError.notFound('recurso_no_encontrado', `La reserva ${clave} no existe`);
  const transition = confirmTransition(row.estado);
  if (transition.kind === 'noop') return toReply(row, false);
  if (transition.kind === 'refuse') throw new AppError('CONFLICT', transition.message);
  if (transition.stock === 'take' && row.bodega_id !== null) {
    const bodegaId = row.bodega_id;
    const lineas = stockLineas(row.lineas);
    const keys = lineas.map((l) => ({ productoId: l.productoId, bodegaId }));
    const locked = await lockStock(trx, empresaId, keys, { create: true });
    const stockOf = lockedStockOf(locked);
    const plan = planTake(lineas, bodegaId, (productoId) => stockOf({ productoId, bodegaId }), true);
    await applyMoves(trx, empresaId, locked, plan.moves, {
      tipo: 'reserva',
      origen: row.origen,
      causa: row.causa,
      clave,
      concepto: 'Reserva confirmada después de liberada',
    });
  }
  return toReply(await setReservaEstado(trx, row.id, transition.to), true);
}

/**
 * Gives a reservation's stock back once. An unknown key is recorded as released, so a reserve
 * delivered after its own release (a retry that overtook it) finds it and moves nothing.
 */
export async function releaseReserva(trx: Transaction<InventoryDb>, empresaId: number, clave: string): Promise<Reservation> {
  let row = await findReserva(trx, empresaId, clave, { lock: true });
  if (!row) {
    const tombstone = await insertReserva(trx, {
      empresaId,
      clave,
      origen: 'venta',
      causa: {},
      bodegaId: null,
      estado: 'liberada',
      lineas: [],
      revisarEnMs: 0,
    });
    if (tombstone) return toReply(tombstone, true);
    row = (await findReserva(trx, empresaId, clave, { lock: true }))!;
  }
  const transition = releaseTransition(row.estado);
  if (transition.kind === 'noop') return toReply(row, false);
  if (transition.kind === 'refuse') throw new AppError('CONFLICT', transition.message);
  if (row.bodega_id !== null) {
    const bodegaId = row.bodega_id;
    const lineas = stockLineas(row.lineas);
    const keys = lineas.map((l) => ({ productoId: l.productoId, bodegaId }));
    const locked = await lockStock(trx, empresaId, keys, { create: true });
    const stockOf = lockedStockOf(locked);
    const moves = planReturn(lineas, bodegaId, (productoId) => stockOf({ productoId, bodegaId }));
    await applyMoves(trx, empresaId, locked, moves, {
      tipo: 'liberacion',
      origen: row.origen,
      causa: row.causa,
      clave,
      concepto: 'Reserva liberada',
    });
  }
  return toReply(await setReservaEstado(trx, row.id, transition.to), true);
}
