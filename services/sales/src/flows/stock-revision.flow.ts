import type { Transaction } from 'kysely';
import { AppError, isAppError, type TenantContext } from '@erp/contracts';
import type { SalesDb } from '../db/tables';
import { remapReserveDetails, summaryMessage } from '../domain/sale-rules';
import { remainingMoves, type StockMove } from '../domain/stock-lines';
import type { InventoryPort } from './inventory.port';

/** Inventory key of stock revision `n` of a sale. */
export const revisionKey = (ventaId: number, revision: number) => `venta-${ventaId}-rev-${revision}`;

/** More orphaned revisions than this in a row means something is badly wrong: stop rather than loop. */
const MAX_ORPHANED_REVISIONS = 20;

export interface StockRevisionRequest {
  ventaId: number;
  /** The sale's last committed stock revision, read under its row lock. */
  revision: number;
  /** What inventory must change to go from what the sale held to what it will hold. */
  moves: StockMove[];
  origen: 'actualizacion_venta' | 'anulacion_venta';
  concepto: string;
  /** For a refusal: the `detalles` positions behind a move, to name them in the answer. */
  linesOf?: (move: StockMove) => number[];
  /**
   * No change can follow this one (the annulment): its revision is claimed even when nothing
   * moves, so an orphaned revision is found and squared now rather than by a later change.
   */
  final?: boolean;
}

/**
 * Moves a sale's stock for one change after its creation (an update by difference, the
 * annulment) under the sale's next stock revision, and answers the revision to store with the
 * sale. The caller holds the sale's row lock and stores the answer; orphaned revisions are
 * squared here, as `docs/stock-revisions.md` tells.
 */
export async function adjustStockRevision(
  inventory: InventoryPort,
  ctx: TenantContext,
  request: StockRevisionRequest,
  trx?: Transaction<SalesDb>,
): Promise<number> {
  let revision = request.revision;
  let moves = request.moves;
  for (let orphans = 0; moves.length > 0 || (request.final && orphans === 0); orphans++) {
    if (orphans > MAX_ORPHANED_REVISIONS)
      throw new Error(`Sale ${request.ventaId}: more than ${MAX_ORPHANED_REVISIONS} orphaned stock revisions after ${request.revision}`);
    revision += 1;
    const reply = await adjust(inventory, ctx, revisionKey(request.ventaId, revision), moves, request, trx);
    if (reply.aplicado) return revision;
    moves = remainingMoves(moves, reply.movimientos);
  }
  return revision;
}

async function adjust(
  inventory: InventoryPort,
  ctx: TenantContext,
  clave: string,
  moves: StockMove[],
  request: StockRevisionRequest,
  trx: Transaction<SalesDb> | undefined,
) {
  try {
    return await inventory.adjust(
      ctx,
      {
        clave,
        origen: request.origen,
        concepto: request.concepto,
        lineas: moves.map((m) => ({ id_producto: m.id_producto, id_bodega: m.id_bodega, cantidad: m.cantidad })),
      },
      trx,
    );
  } catch (err) {
    if (isAppError(err) && (err.code === 'BUSINESS_RULE' || err.code === 'VALIDATION_FAILED')) {
      // Refused whole: nothing moved under the key.
      const details = remapReserveDetails(
        err.details,
        moves.map((m) => request.linesOf?.(m) ?? []),
      );
      throw AppError.rule(err.reason, Object.keys(details).length > 0 ? summaryMessage(details) : err.message, details);
    }
    throw err;
  }
}
