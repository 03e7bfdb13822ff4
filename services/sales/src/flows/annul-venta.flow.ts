import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { enqueueEvent, type Bus } from '@erp/bus';
import { AppError, Sale, salesEvents, type RequestContext, type SaleInput, type TenantContext } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { SalesDb } from '../db/tables';
import { lockVenta, updateVenta } from '../db/venta.repository';
import { findVenta, stockDetallesOf } from '../db/venta-read.repository';
import { takesStock } from '../domain/venta-rules';
import { heldStock, ventaStockCause, stockDiff } from '../domain/stock-lines';
import { busInventory } from '../ports/inventory.port';
import { squareIfReturned } from './square-registrations.flow';
import { adjustStockRevision, trackedChange } from './stock-revision.flow';

/**
 * Annuls a sale: the stock it holds (a Completada or Pendiente sale holds its lines; a quotation
 * nothing) goes back as the sale's next stock revision, the same sequence its updates use, so an
 * annulment retried, or racing an update, never returns stock twice (see `adjustStockRevision`).
 * The state changes in the transaction that holds the sale's row, after the adjustment answered;
 * an annulled sale is answered as it is.
 */
export async function annulVenta(
  db: Kysely<SalesDb>,
  bus: Bus,
  { empresa_id, id_venta }: { empresa_id: number; id_venta: number },
  reqCtx: RequestContext,
): Promise<SaleInput> {
  const requestId = reqCtx.requestId ?? `annul-${randomUUID()}`;
  await squareIfReturned(db, bus, empresa_id, id_venta, requestId);
  await trackedChange(db, empresa_id, id_venta, (committed) =>
    inTransaction(db, async (trx) => {
      await committed(trx);
      const venta = await lockVenta(trx, empresa_id, id_venta);
      if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
      if (venta.estado === 'Anulada') return;
      // Their stock is already back: returning all the sale holds would count it twice. A
      // return registers under this lock before it commits, so none can slip in after this check.
      if (venta.devoluciones_activas > 0)
        throw AppError.rule('estado_no_modificable', 'La venta tiene devoluciones activas: anúlelas antes de anular la venta', {
          id_venta: ['La venta tiene devoluciones activas'],
        });
      const moves = stockDiff(
        heldStock(takesStock(venta.estado), venta.bodega_id, await stockDetallesOf(trx, empresa_id, id_venta)),
        new Map(),
      );
      const ctx: TenantContext = { requestId, empresa: { id: empresa_id, nombre: '', iva: '13', venderSinStock: true }, usuario: null };
      const revision = await adjustStockRevision(busInventory(bus), ctx, {
        ventaId: id_venta,
        revision: venta.revision_stock,
        moves,
        origen: 'anulacion_venta',
        causa: ventaStockCause(venta),
        concepto: `Anulación de la venta ${id_venta}`,
        final: true,
      });
      await updateVenta(trx, id_venta, {
        estado: 'Anulada',
        saldo: '0',
        revision_stock: revision,
        ...(moves.length > 0 ? { stock_devuelto_at: new Date() } : {}),
      });
      const annulled = await findVenta(trx, empresa_id, id_venta);
      await enqueueEvent(trx, salesEvents, 'events.sales.sale.annulled', { empresa_id, id_venta, venta: Sale.parse(annulled) }, reqCtx);
    }),
  );
  const venta = await findVenta(db, empresa_id, id_venta);
  if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
  return venta;
}
