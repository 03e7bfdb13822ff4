import { AppError, type TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { findProductWithStock } from '../db/product.repository';
import type { InventoryDb } from '../db/tables';

export function getProductHandler(db: Kysely<InventoryDb>) {
  return async ({ id }: { id: number }, ctx: TenantContext) => {
    const product = await findProductWithStock(db, ctx.empresa.id, id);
    if (!product) throw AppError.notFound('Producto no encontrado');
    return product;
  };
}
