import type { Kysely } from 'kysely';
import type { Bus, Handlers } from '@erp/bus';
import { AppError, type salesForReturnsSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { findReturnableVenta } from '../db/returnable.repository';
import { registerDevolucion } from '../db/registro-devolucion.repository';
import type { SalesDb } from '../db/tables';
import { lockVenta } from '../db/venta.repository';
import { takesStock } from '../domain/venta-rules';
import { squareRegistrations } from '../flows/square-registrations.flow';
import { ventaReturnableHandler } from './venta-returnable.handler';

/** What the sales service answers the returns service: the sale to return, and the registration of a return with it. */
export function returnRegistrationHandlers(db: Kysely<SalesDb>, bus: Bus): Handlers<typeof salesForReturnsSubjects> {
  return {
    'sales.sale.returnable': ventaReturnableHandler(db),
    'sales.sale.return.register': async ({ id_venta, clave }, ctx) =>
      inTransaction(db, async (trx) => {
        const venta = await lockVenta(trx, ctx.empresa.id, id_venta);
        if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
        // Only a sale that holds its lines can be returned; the returns service refuses the others.
        if (takesStock(venta.estado)) await registerDevolucion(trx, ctx.empresa.id, id_venta, clave);
        const returnable = await findReturnableVenta(trx, ctx.empresa.id, id_venta);
        if (!returnable) throw new Error(`Sale ${id_venta} vanished while it was locked`);
        return returnable;
      }),
    'sales.sale.return.square': async ({ id_venta }, ctx) => {
      const devoluciones_activas = await squareRegistrations(db, bus, ctx.empresa.id, id_venta, ctx.requestId);
      if (devoluciones_activas === undefined) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
      return { devoluciones_activas };
    },
  };
}
