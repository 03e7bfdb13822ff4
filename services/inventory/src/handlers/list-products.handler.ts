import { JsonText } from '@erp/bus';
import { paginate, type InventoryListRequest, type TenantContext } from '@erp/contracts';
import { answerChangePage } from '@erp/db';
import type { Kysely } from 'kysely';
import { listProductoChanges } from '../db/producto-feed.repository';
import { listProductos } from '../db/producto-list.repository';
import type { InventoryDb } from '../db/tables';
import { filtersApplied } from '../domain/list-filters';

export function listProductsHandler(db: Kysely<InventoryDb>) {
  return async (request: InventoryListRequest, ctx: TenantContext) => {
    const filters_applied = {
      ...filtersApplied(request),
      ...(request.updated_since !== undefined ? { updated_since: request.updated_since } : {}),
    };
    if (request.order_by !== 'updated_at') {
      const { total, json } = await listProductos(db, ctx.empresa.id, request);
      return { items: new JsonText(json), pagination: paginate(request, total), filters_applied };
    }
    const page = await answerChangePage(db, request, (trx, after) => listProductoChanges(trx, ctx.empresa.id, request, after));
    return { ...page, filters_applied };
  };
}
