import { paginate, type InventoryListRequest, type TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { listProducts } from '../db/product.repository';
import type { InventoryDb } from '../db/tables';
import { filtersApplied } from '../domain/list-filters';

export function listProductsHandler(db: Kysely<InventoryDb>) {
  return async (request: InventoryListRequest, ctx: TenantContext) => {
    const { total, rows } = await listProducts(db, ctx.empresa.id, request);
    return { items: rows, pagination: paginate(request, total), filters_applied: filtersApplied(request) };
  };
}
