import type { Kysely } from 'kysely';
import { AppError, type TenantContext } from '@erp/contracts';
import { findReturnableVenta } from '../db/returnable.repository';
import type { SalesDb } from '../db/tables';

/** A sale of the asking company as the returns service needs it: another company's id is not found. */
export function ventaReturnableHandler(db: Kysely<SalesDb>) {
  return async ({ id_venta }: { id_venta: number }, ctx: TenantContext) => {
    const venta = await findReturnableVenta(db, ctx.empresa.id, id_venta);
    if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
    return venta;
  };
}
