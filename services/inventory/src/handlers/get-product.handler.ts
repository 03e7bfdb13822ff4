import { JsonText } from '@erp/bus';
import { AppError, type TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { findProductoJson } from '../db/producto-json.repository';
import type { InventoryDb } from '../db/tables';

export function getProductHandler(db: Kysely<InventoryDb>) {
  return async ({ id }: { id: number }, ctx: TenantContext) => {
    const product = await findProductoJson(db, ctx.empresa.id, id);
    if (product === undefined) throw AppError.notFound('producto_no_encontrado', 'Producto no encontrado');
    return new JsonText(product);
  };
}
