import { AppError, type ParsedRequestOf, type Reservation, type inventorySubjects } from '@erp/contracts';
import type { Transaction } from 'kysely';
import { findReserva, insertReserva, setReservaEstado, type ReservaRow } from '../db/reserva.repository';
import { applyMoves, findBodega, findStockProductos, lockStock, lockedStockOf } from '../db/stock.repository';
import type { InventoryDb, ReservaLinea } from '../db/tables';
import { checkBodega } from '../domain/resolve-product';
import { confirmTransition, releaseTransition } from '../domain/reservation';
import { aggregateLines, planReturn, planTake, shortfallDetails, type AggregatedLine } from '../domain/stock-plan';

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

const stockLines = (lineas: readonly ReservaLinea[]): AggregatedLine[] =>
  lineas.filter((l) => l.mueve_stock).map((l) => ({ productoId: l.id_producto, cantidad: l.cantidad, lineIndexes: [] }));

const sameLines = (a: readonly ReservaLinea[], b: readonly ReservaLinea[]) =>
  a.length === b.length && a.every((l, i) => l.id_producto === b[i]!.id_producto && l.cantidad === b[i]!.cantidad);

/** A replay of a key answers what was recorded; the same key for different lines is a caller's bug. */
function replay(existing: ReservaRow, bodegaId: number, lineas: readonly ReservaLinea[]): Reservation {
  const tombstone = existing.estado === 'liberada' && existing.bodega_id === null;
  if (!tombstone && (existing.bodega_id !== bodegaId || !sameLines(existing.lineas, lineas))) {
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
  const products = await findStockProductos(
    trx,
    empresaId,
    aggregated.map((l) => l.productoId),
    { lock: true },
  );
  const lineas: ReservaLinea[] = aggregated.map((l) => ({
    id_producto: l.productoId,
    cantidad: l.cantidad,
    mueve_stock: products.get(l.productoId)?.tipo === 'Producto',
  }));

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

  const details: Record<string, string[]> = {};
  req.lineas.forEach((line, i) => {
    if (!products.has(line.id_producto)) details[`lineas.${i}.id_producto`] = [`El producto ${line.id_producto} no existe`];
  });
  if (!bodega.ok) details.id_bodega = [bodega.message];
  if (Object.keys(details).length > 0 || !inserted)
    throw AppError.validation(
      'La reserva tiene datos inválidos',
      details,
      bodega.ok ? 'producto_no_encontrado' : 'dato_relacionado_invalido',
    );

  const moving = aggregated.filter((l) => products.get(l.productoId)?.tipo === 'Producto');
  const keys = moving.map((l) => ({ productoId: l.productoId, bodegaId: req.id_bodega }));
  const allowNegative = req.permitir_sin_stock ?? options.allowNegative;
  const locked = await lockStock(trx, empresaId, keys, { create: allowNegative, heldLugaresAndProductos: true });
  const stockOf = lockedStockOf(locked);
  const plan = planTake(moving, req.id_bodega, (productoId) => stockOf({ productoId, bodegaId: req.id_bodega }), allowNegative);
  if (plan.shortfalls.length > 0) {
    throw AppError.rule(
      'stock_insuficiente',
      'Stock insuficiente y la empresa no permite vender sin stock',
      shortfallDetails(plan.shortfalls, (id) => products.get(id)?.codigo ?? String(id)),
    );
  }
  await applyMoves(trx, empresaId, locked, plan.moves, {
    tipo: 'reserva',
    origen: req.origen,
    causa: req.causa,
    clave: req.clave,
    concepto: 'Reserva de stock',
  });
  return toReply(inserted, true);
}

/**
 * Confirms a reservation. One released before (its sale committed after all) takes its stock
 * again, even below zero: the sale exists, so the stock is already gone.
 */
export async function confirmReservation(trx: Transaction<InventoryDb>, empresaId: number, clave: string): Promise<Reservation> {
  const row = await findReserva(trx, empresaId, clave, { lock: true });
  if (!row) throw AppError.notFound('recurso_no_encontrado', `La reserva ${clave} no existe`);
  const transition = confirmTransition(row.estado);
  if (transition.kind === 'noop') return toReply(row, false);
  if (transition.kind === 'refuse') throw new AppError('CONFLICT', transition.message);
  if (transition.stock === 'take' && row.bodega_id !== null) {
    const bodegaId = row.bodega_id;
    const lines = stockLines(row.lineas);
    const keys = lines.map((l) => ({ productoId: l.productoId, bodegaId }));
    const locked = await lockStock(trx, empresaId, keys, { create: true });
    const stockOf = lockedStockOf(locked);
    const plan = planTake(lines, bodegaId, (productoId) => stockOf({ productoId, bodegaId }), true);
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
export async function releaseReservation(trx: Transaction<InventoryDb>, empresaId: number, clave: string): Promise<Reservation> {
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
    const lines = stockLines(row.lineas);
    const keys = lines.map((l) => ({ productoId: l.productoId, bodegaId }));
    const locked = await lockStock(trx, empresaId, keys, { create: true });
    const stockOf = lockedStockOf(locked);
    const moves = planReturn(lines, bodegaId, (productoId) => stockOf({ productoId, bodegaId }));
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
