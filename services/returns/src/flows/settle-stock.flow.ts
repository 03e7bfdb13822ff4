import type { Kysely } from 'kysely';
import type { Bus } from '@erp/bus';
import type { RequestContext, TenantContext } from '@erp/contracts';
import { markStock } from '../db/devolucion.repository';
import { findStockState, stockDetallesOf } from '../db/devolucion-read.repository';
import type { ReturnsDb } from '../db/tables';
import { busInventory } from '../ports/inventory.port';

/** Inventory key of the reversal of a return's stock when it is annulled. */
export const annulmentKey = (id: number): string => `devolucion-${id}-anulacion`;

/**
 * Brings inventory in line with a committed return: the stock it put back (under the key chosen
 * before its transaction), then, once annulled, the reversal of exactly that (under
 * `devolucion-<id>-anulacion`). Inventory applies each key once, and each step is marked done
 * after it answered, so calling this again (the handler after its commit, the consumer of the
 * return's events, a retry) moves nothing more. The reversal always follows the stock it undoes
 * and may take stock below zero: it mirrors a document, the goods are already gone.
 */
export async function settleStock(db: Kysely<ReturnsDb>, bus: Bus, empresaId: number, id: number, reqCtx?: RequestContext): Promise<void> {
  const state = await findStockState(db, empresaId, id);
  if (!state || state.clave_stock === null) return;
  const owesStock = state.stock_aplicado_at === null;
  const owesReversal = !state.enable && state.stock_revertido_at === null;
  if (!owesStock && !owesReversal) return;

  const lineas = await stockDetallesOf(db, empresaId, id);
  const ctx: TenantContext = {
    requestId: reqCtx?.requestId ?? `devolucion-${id}`,
    empresa: reqCtx?.empresa ?? { id: empresaId, nombre: '', iva: '13', venderSinStock: true },
    usuario: reqCtx?.usuario ?? null,
  };
  const inventory = busInventory(bus);
  if (owesStock) {
    await inventory.adjust(ctx, {
      clave: state.clave_stock,
      origen: 'devolucion',
      causa: { id_devolucion: id },
      concepto: `Devolución ${id} de la venta ${state.venta_id}`,
      lineas: lineas.map((l) => ({ id_producto: l.id_producto, id_bodega: state.bodega_id, cantidad: l.cantidad })),
    });
    await markStock(db, id, 'stock_aplicado_at');
  }
  if (owesReversal) {
    await inventory.adjust(ctx, {
      clave: annulmentKey(id),
      origen: 'anulacion_devolucion',
      causa: { id_devolucion: id },
      concepto: `Anulación de la devolución ${id} de la venta ${state.venta_id}`,
      permitir_sin_stock: true,
      lineas: lineas.map((l) => ({ id_producto: l.id_producto, id_bodega: state.bodega_id, cantidad: `-${l.cantidad}` })),
    });
    await markStock(db, id, 'stock_revertido_at');
  }
}
