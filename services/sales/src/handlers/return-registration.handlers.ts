import type { Kysely } from 'kysely';
import type { Bus, Handlers } from '@erp/bus';
import { AppError, returnsForSalesSubjects, type salesForReturnsSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { findReturnableSale } from '../db/returnable.repository';
import { addActiveReturns, confirmRegistration, discardRegistration, pendingRegistrations, registerReturn } from '../db/return-registration.repository';
import type { SalesDb } from '../db/tables';
import { lockVenta } from '../db/venta.repository';
import { takesStock } from '../domain/sale-rules';
import { saleReturnableHandler } from './sale-returnable.handler';

/**
 * Squares the pending registrations of a sale, in a transaction of its own that holds the sale's
 * row lock: asks the returns service which became committed returns, confirms those and discards
 * the others (they no longer count in `devoluciones_activas`). When a return of the sale is being
 * made right now the returns service answers `ocupada` and every registration keeps counting.
 * Annulments and updates call it before their own transaction, so what it settles stays settled
 * even when they are then refused. Answers the sale's count of active returns (undefined when the
 * company has no such sale).
 */
export async function squareRegistrations(db: Kysely<SalesDb>, bus: Bus, empresaId: number, ventaId: number, requestId: string): Promise<number | undefined> {
  return inTransaction(db, async (trx) => {
    const venta = await lockVenta(trx, empresaId, ventaId);
    if (!venta) return undefined;
    const claves = await pendingRegistrations(trx, empresaId, ventaId);
    if (claves.length === 0) return venta.devoluciones_activas;
    const answer = await bus.request(returnsForSalesSubjects, 'returns.sale.registrations', { empresa_id: empresaId, id_venta: ventaId, claves }, { requestId });
    if (answer.ocupada) return venta.devoluciones_activas;
    const committed = new Map(answer.devoluciones.map((d) => [d.clave, d.id_devolucion]));
    let discarded = 0;
    for (const clave of claves) {
      const id = committed.get(clave);
      if (id !== undefined) await confirmRegistration(trx, empresaId, clave, id);
      else if (await discardRegistration(trx, empresaId, clave)) discarded++;
    }
    if (discarded > 0) await addActiveReturns(trx, empresaId, ventaId, -discarded);
    return venta.devoluciones_activas - discarded;
  });
}

/** Squares the sale's registrations first when it counts active returns: then the caller's own transaction reads the settled count. */
export async function squareIfReturned(db: Kysely<SalesDb>, bus: Bus, empresaId: number, ventaId: number, requestId: string): Promise<void> {
  const venta = await db.selectFrom('ventas').select('devoluciones_activas').where('empresa_id', '=', empresaId).where('id', '=', ventaId).executeTakeFirst();
  if (venta && venta.devoluciones_activas > 0) await squareRegistrations(db, bus, empresaId, ventaId, requestId);
}

/** What the sales service answers the returns service: the sale to return, and the registration of a return with it. */
export function returnRegistrationHandlers(db: Kysely<SalesDb>, bus: Bus): Handlers<typeof salesForReturnsSubjects> {
  return {
    'sales.sale.returnable': saleReturnableHandler(db),
    'sales.sale.return.register': async ({ id_venta, clave }, ctx) =>
      inTransaction(db, async (trx) => {
        const venta = await lockVenta(trx, ctx.empresa.id, id_venta);
        if (!venta) throw AppError.notFound('Venta no encontrada');
        // Only a sale that holds its lines can be returned; the returns service refuses the others.
        if (takesStock(venta.estado)) await registerReturn(trx, ctx.empresa.id, id_venta, clave);
        const returnable = await findReturnableSale(trx, ctx.empresa.id, id_venta);
        if (!returnable) throw new Error(`Sale ${id_venta} vanished while it was locked`);
        return returnable;
      }),
    'sales.sale.return.square': async ({ id_venta }, ctx) => {
      const devoluciones_activas = await squareRegistrations(db, bus, ctx.empresa.id, id_venta, ctx.requestId);
      if (devoluciones_activas === undefined) throw AppError.notFound('Venta no encontrada');
      return { devoluciones_activas };
    },
  };
}
