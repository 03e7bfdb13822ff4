import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { enqueueEvent, type Bus, type Handlers } from '@erp/bus';
import { AppError, Sale, salesEvents, type TenantContext, type salesAdminSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { SalesDb } from '../db/tables';
import { findSale, lockVenta, stockLinesOf, updateVenta } from '../db/venta.repository';
import { takesStock } from '../domain/sale-rules';
import { heldStock, stockDiff } from '../domain/stock-lines';
import { squareIfReturned } from '../flows/square-registrations.flow';
import { adjustStockRevision } from './stock-revision';

/** Back office: fixture loading, annulment and the fiscal document mark. */
export function adminHandlers(db: Kysely<SalesDb>, bus: Bus): Handlers<typeof salesAdminSubjects> {
  const saleOf = async (empresaId: number, id: number) => {
    const venta = await findSale(db, empresaId, id);
    if (!venta) throw AppError.notFound('Venta no encontrada');
    return venta;
  };

  return {
    'sales.admin.seed': async (req) =>
      inTransaction(db, async (trx) => {
        const documentos: Record<string, number> = {};
        const canales: Record<string, number> = {};
        const clientes: Record<string, number> = {};
        for (const d of req.documentos) {
          if (documentos[d.ref] !== undefined) throw AppError.validation(`El documento "${d.ref}" está repetido`);
          const { id } = await trx
            .insertInto('documentos')
            .values({ empresa_id: req.empresa_id, sucursal_id: d.id_sucursal, nombre: d.nombre, prefijo: d.prefijo, correlativo: d.correlativo, activo: d.activo, solo_cotizacion: d.solo_cotizacion })
            .returning('id')
            .executeTakeFirstOrThrow();
          documentos[d.ref] = id;
        }
        for (const c of req.canales) {
          if (canales[c.ref] !== undefined) throw AppError.validation(`El canal "${c.ref}" está repetido`);
          const { id } = await trx.insertInto('canales').values({ empresa_id: req.empresa_id, nombre: c.nombre, activo: c.activo }).returning('id').executeTakeFirstOrThrow();
          canales[c.ref] = id;
        }
        for (const c of req.clientes) {
          if (clientes[c.ref] !== undefined) throw AppError.validation(`El cliente "${c.ref}" está repetido`);
          const { id } = await trx
            .insertInto('clientes')
            .values({ empresa_id: req.empresa_id, nombre: c.nombre, email: c.email ?? null, limite_credito: c.limite_credito, activo: c.activo })
            .returning('id')
            .executeTakeFirstOrThrow();
          clientes[c.ref] = id;
        }
        return { documentos, canales, clientes };
      }),

    /**
     * Annuls a sale: the stock it holds (a Completada or Pendiente sale holds its lines; a
     * quotation nothing) goes back as the sale's next stock revision, the same sequence its
     * updates use, so an annulment retried, or racing an update, never returns stock twice (see
     * `adjustStockRevision`). The state changes in the transaction that holds the sale's row, after
     * the adjustment answered; an annulled sale is answered as it is.
     */
    'sales.admin.annul': async ({ empresa_id, id_venta }, reqCtx) => {
      const requestId = reqCtx.requestId ?? `annul-${randomUUID()}`;
      await squareIfReturned(db, bus, empresa_id, id_venta, requestId);
      await inTransaction(db, async (trx) => {
        const venta = await lockVenta(trx, empresa_id, id_venta);
        if (!venta) throw AppError.notFound('Venta no encontrada');
        if (venta.estado === 'Anulada') return;
        // Their stock is already back: returning all the sale holds would count it twice. A
        // return registers under this lock before it commits, so none can slip in after this check.
        if (venta.devoluciones_activas > 0) throw AppError.rule('La venta tiene devoluciones activas: anúlelas antes de anular la venta', { id_venta: ['La venta tiene devoluciones activas'] });
        const moves = stockDiff(heldStock(takesStock(venta.estado), venta.bodega_id, await stockLinesOf(trx, empresa_id, id_venta)), new Map());
        const ctx: TenantContext = { requestId, empresa: { id: empresa_id, nombre: '', iva: '13', venderSinStock: true }, usuario: null };
        const revision = await adjustStockRevision(bus, ctx, {
          ventaId: id_venta,
          revision: venta.revision_stock,
          moves,
          origen: 'anulacion_venta',
          concepto: `Anulación de la venta ${id_venta}`,
          final: true,
        });
        await updateVenta(trx, id_venta, { estado: 'Anulada', saldo: '0', revision_stock: revision, ...(moves.length > 0 ? { stock_devuelto_at: new Date() } : {}) });
        const annulled = await findSale(trx, empresa_id, id_venta);
        await enqueueEvent(trx, salesEvents, 'events.sales.sale.annulled', { empresa_id, id_venta, venta: Sale.parse(annulled) }, reqCtx);
      });
      return saleOf(empresa_id, id_venta);
    },

    'sales.admin.fiscal-emitted': async ({ empresa_id, id_venta }) => {
      await inTransaction(db, async (trx) => {
        const venta = await lockVenta(trx, empresa_id, id_venta);
        if (!venta) throw AppError.notFound('Venta no encontrada');
        await updateVenta(trx, id_venta, { documento_fiscal_emitido: true });
      });
      return saleOf(empresa_id, id_venta);
    },
  };
}
