import type { Kysely } from 'kysely';
import type { Bus, Handlers } from '@erp/bus';
import { AppError, type salesAdminSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { insertCanal, insertCliente, insertDocumento } from '../db/catalog.repository';
import type { SalesDb } from '../db/tables';
import { lockVenta, updateVenta } from '../db/venta.repository';
import { findVenta } from '../db/venta-read.repository';
import { annulVenta } from '../flows/annul-venta.flow';

/** Back office: fixture loading, annulment and the fiscal document mark. */
export function adminHandlers(db: Kysely<SalesDb>, bus: Bus): Handlers<typeof salesAdminSubjects> {
  return {
    'sales.admin.seed': async (req) =>
      inTransaction(db, async (trx) => {
        const documentos: Record<string, number> = {};
        const canales: Record<string, number> = {};
        const clientes: Record<string, number> = {};
        for (const d of req.documentos) {
          if (documentos[d.ref] !== undefined) throw AppError.validation(`El documento "${d.ref}" está repetido`);
          documentos[d.ref] = await insertDocumento(trx, {
            empresa_id: req.empresa_id,
            sucursal_id: d.id_sucursal,
            nombre: d.nombre,
            prefijo: d.prefijo,
            correlativo: d.correlativo,
            activo: d.activo,
            solo_cotizacion: d.solo_cotizacion,
          });
        }
        for (const c of req.canales) {
          if (canales[c.ref] !== undefined) throw AppError.validation(`El canal "${c.ref}" está repetido`);
          canales[c.ref] = await insertCanal(trx, { empresa_id: req.empresa_id, nombre: c.nombre, activo: c.activo });
        }
        for (const c of req.clientes) {
          if (clientes[c.ref] !== undefined) throw AppError.validation(`El cliente "${c.ref}" está repetido`);
          clientes[c.ref] = await insertCliente(trx, {
            empresa_id: req.empresa_id,
            nombre: c.nombre,
            email: c.email ?? null,
            numero_documento: c.numero_documento ?? null,
            limite_credito: c.limite_credito,
            activo: c.activo,
          });
        }
        return { documentos, canales, clientes };
      }),

    'sales.admin.annul': async (req, ctx) => annulVenta(db, bus, req, ctx),

    'sales.admin.fiscal-emitted': async ({ empresa_id, id_venta }) => {
      await inTransaction(db, async (trx) => {
        const venta = await lockVenta(trx, empresa_id, id_venta);
        if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
        await updateVenta(trx, id_venta, { documento_fiscal_emitido: true });
      });
      const venta = await findVenta(db, empresa_id, id_venta);
      if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
      return venta;
    },
  };
}
