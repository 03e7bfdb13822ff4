import type { Kysely, Transaction } from 'kysely';
import { AppError, isAppError, type CausaStock, type TenantContext } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { deleteCambioEnCurso, deleteStaleCambios, insertCambioEnCurso } from '../db/cambio-en-curso.repository';
import type { SalesDb } from '../db/tables';
import { lockVenta } from '../db/venta.repository';
import { remapReserveDetails, summaryMessage } from '../domain/venta-rules';
import { remainingMoves, type StockMove } from '../domain/stock-lines';
import type { InventoryPort } from '../ports/inventory.port';

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
  /** The sale as every movement of it names it (`ventaStockCause`). */
  causa: CausaStock;
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
export async function adjustStockRevision(inventory: InventoryPort, ctx: TenantContext, request: StockRevisionRequest): Promise<number> {
  let revision = request.revision;
  let moves = request.moves;
  for (let orphans = 0; moves.length > 0 || (request.final && orphans === 0); orphans++) {
    if (orphans > MAX_ORPHANED_REVISIONS)
      throw new Error(`Sale ${request.ventaId}: more than ${MAX_ORPHANED_REVISIONS} orphaned stock revisions after ${request.revision}`);
    revision += 1;
    const reply = await adjust(inventory, ctx, revisionKey(request.ventaId, revision), moves, request);
    if (reply.aplicado) return revision;
    moves = remainingMoves(moves, reply.movimientos);
  }
  return revision;
}

/** Refusals move nothing: a change refused leaves nothing for the sweeper. */
const REFUSALS = new Set(['NOT_FOUND', 'BUSINESS_RULE', 'VALIDATION_FAILED']);

/**
 * Runs a change of a sale that may move its stock (an update, the annulment) with a record in
 * `cambios_en_curso`, committed before it and removed by the change's own transaction (`committed`
 * is called in it), or at once when the change is refused. A record that outlives its change marks
 * one that died, perhaps after inventory applied its revision: the revision sweeper squares it.
 */
export async function trackedChange<T>(
  db: Kysely<SalesDb>,
  empresaId: number,
  ventaId: number,
  change: (committed: (trx: Transaction<SalesDb>) => Promise<void>) => Promise<T>,
): Promise<T> {
  const clave = await insertCambioEnCurso(db, empresaId, ventaId);
  try {
    return await change((trx) => deleteCambioEnCurso(trx, empresaId, clave));
  } catch (err) {
    if (isAppError(err) && REFUSALS.has(err.code)) await deleteCambioEnCurso(db, empresaId, clave).catch(() => undefined);
    throw err;
  }
}

/**
 * Squares a sale after a change of it died (its record in `cambios_en_curso` outlived it): under
 * the sale's row lock, so no change of the sale runs meanwhile, every stock revision past the one
 * the sale stored is reverted in inventory (an orphan's movements reversed, its key spent) up to
 * the first key inventory never saw, which is spent too in case its adjustment is still on its way.
 * The sale's stock then is what its committed lines hold, and its next change moves past the
 * spent keys. Removes the sale's change records older than `olderThanMs`; answers the keys reverted.
 */
export async function squareRevisions(
  db: Kysely<SalesDb>,
  inventory: InventoryPort,
  target: { empresaId: number; ventaId: number; requestId: string },
  olderThanMs: number,
): Promise<string[]> {
  const { empresaId, ventaId } = target;
  return inTransaction(db, async (trx) => {
    const venta = await lockVenta(trx, empresaId, ventaId);
    const reverted: string[] = [];
    if (venta) {
      const ctx: TenantContext = {
        requestId: target.requestId,
        empresa: { id: empresaId, nombre: '', iva: '13', venderSinStock: true },
        usuario: null,
      };
      for (let n = venta.revision_stock + 1; n <= venta.revision_stock + MAX_ORPHANED_REVISIONS + 1; n++) {
        const reply = await inventory.revert(ctx, { clave: revisionKey(ventaId, n) });
        if (reply.revertido) reverted.push(reply.clave);
        if (!reply.existia) break;
      }
    }
    await deleteStaleCambios(trx, empresaId, ventaId, olderThanMs);
    return reverted;
  });
}

async function adjust(inventory: InventoryPort, ctx: TenantContext, clave: string, moves: StockMove[], request: StockRevisionRequest) {
  try {
    return await inventory.adjust(ctx, {
      clave,
      origen: request.origen,
      causa: request.causa,
      concepto: request.concepto,
      lineas: moves.map((m) => ({ id_producto: m.id_producto, id_bodega: m.id_bodega, cantidad: m.cantidad })),
    });
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
