import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus, Handlers } from '@erp/bus';
import { AppError, inventorySubjects, type TenantContext, type salesAdminSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { SalesDb } from '../db/tables';
import { findSale, lockVenta, stockLinesOf, updateVenta } from '../db/venta.repository';
import { stockToReturn } from '../domain/stock-lines';

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
     * Annuls a sale: its stock goes back through one inventory adjustment keyed by the sale, so
     * a repeated or retried annulment moves nothing more; the state changes in the same
     * transaction that holds the sale's row, after the adjustment answered.
     */
    'sales.admin.annul': async ({ empresa_id, id_venta }, reqCtx) => {
      await inTransaction(db, async (trx) => {
        const venta = await lockVenta(trx, empresa_id, id_venta);
        if (!venta) throw AppError.notFound('Venta no encontrada');
        const owesStock = venta.clave_reserva !== null && venta.stock_devuelto_at === null;
        if (venta.estado === 'Anulada' && !owesStock) return;
        if (owesStock) {
          const lineas = stockToReturn(await stockLinesOf(trx, empresa_id, id_venta));
          if (lineas.length > 0) {
            const ctx: TenantContext = { requestId: reqCtx.requestId ?? `annul-${randomUUID()}`, empresa: { id: empresa_id, nombre: '', iva: '13', venderSinStock: true }, usuario: null };
            await bus.request(
              inventorySubjects,
              'inventory.stock.adjust',
              {
                clave: `venta-${id_venta}-anulacion`,
                origen: 'anulacion_venta',
                concepto: `Anulación de la venta ${id_venta}`,
                lineas: lineas.map((l) => ({ id_producto: l.id_producto, id_bodega: venta.bodega_id, cantidad: l.cantidad })),
              },
              ctx,
            );
          }
        }
        await updateVenta(trx, id_venta, { estado: 'Anulada', saldo: '0', ...(owesStock ? { stock_devuelto_at: new Date() } : {}) });
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
