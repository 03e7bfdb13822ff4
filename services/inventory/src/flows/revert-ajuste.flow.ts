import type { ParsedRequestOf, ReplyInputOf, inventorySubjects } from '@erp/contracts';
import type { Transaction } from 'kysely';
import { insertAjuste, lockAjuste, markAjusteRevertido } from '../db/ajuste.repository';
import { applyMoves, lockStock, lockedStockOf } from '../db/stock.repository';
import type { InventoryDb } from '../db/tables';
import { planAjuste, type AjusteLine } from '../domain/stock-plan';

type RevertRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.stock.revert'>;
type RevertReply = ReplyInputOf<typeof inventorySubjects, 'inventory.stock.revert'>;

/**
 * Reverts the adjustment under a key, in the caller's transaction: its movements are reversed in
 * the ledger (same origin, key `<clave>:revertido`) and the key is spent, so that adjusting under
 * it again answers that nothing moved. A key never seen is recorded spent (its adjustment may still
 * be on its way); one already reverted answers as it is. Reversing never refuses for lack of stock:
 * it takes back what the adjustment gave.
 */
export async function revertAjuste(trx: Transaction<InventoryDb>, req: RevertRequest, empresaId: number): Promise<RevertReply> {
  const spent = await insertAjuste(trx, { empresaId, clave: req.clave, origen: 'revertido', causa: {}, concepto: null });
  const ajuste = await lockAjuste(trx, empresaId, req.clave);
  if (!ajuste) throw new Error(`Adjustment ${req.clave} vanished while it was locked`);
  if (spent) {
    await markAjusteRevertido(trx, ajuste.id);
    return { clave: req.clave, existia: false, revertido: false, movimientos: [] };
  }
  if (ajuste.revertido_at) return { clave: req.clave, existia: true, revertido: false, movimientos: [] };
  const lineas: AjusteLine[] = ajuste.movimientos.map((m, lineIndex) => ({
    productoId: m.id_producto,
    bodegaId: m.id_bodega,
    cantidad: m.cantidad.startsWith('-') ? m.cantidad.slice(1) : `-${m.cantidad}`,
    lineIndex,
  }));
  const locked = await lockStock(trx, empresaId, lineas, { create: true });
  const plan = planAjuste(lineas, lockedStockOf(locked), true);
  const applied = await applyMoves(trx, empresaId, locked, plan.moves, {
    tipo: 'ajuste',
    origen: ajuste.origen,
    causa: ajuste.causa,
    clave: `${req.clave}:revertido`,
    concepto: `Reversión de ${req.clave}`,
  });
  await markAjusteRevertido(trx, ajuste.id);
  return {
    clave: req.clave,
    existia: true,
    revertido: true,
    movimientos: applied.map((m) => ({
      id_producto: m.productoId,
      id_bodega: m.bodegaId,
      cantidad: m.cantidad,
      stock_resultante: m.stockResultante,
    })),
  };
}
