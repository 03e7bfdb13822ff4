import type { ParsedRequestOf, TenantContext, inventorySubjects } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { findProductosForVenta } from '../db/producto-read.repository';
import { findBodega } from '../db/stock.repository';
import { listActiveSucursales } from '../db/lugar-list.repository';
import type { InventoryDb } from '../db/tables';
import { checkBodega, resolveProducts } from '../domain/resolve-product';
import { resolveBranch } from '../domain/resolve-sucursal';

type ResolveRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.product.resolve'>;

export function resolveProductsHandler(db: Kysely<InventoryDb>) {
  return async (req: ResolveRequest, ctx: TenantContext) => {
    const empresaId = ctx.empresa.id;
    const ids = req.items.flatMap((item) => ('id_producto' in item ? [item.id_producto] : []));
    const codes = req.items.flatMap((item) => ('codigo' in item ? [item.codigo] : []));
    const [products, bodegaRow, branches] = await Promise.all([
      findProductosForVenta(db, empresaId, { ids, codes }, req.id_bodega),
      req.id_bodega !== undefined ? findBodega(db, empresaId, req.id_bodega) : Promise.resolve(undefined),
      req.sucursal !== undefined ? listActiveSucursales(db, empresaId) : Promise.resolve([]),
    ]);
    return {
      bodega: req.id_bodega !== undefined ? checkBodega(req.id_bodega, bodegaRow, req.id_sucursal) : null,
      ...(req.sucursal !== undefined ? { sucursal: resolveBranch(branches, req.sucursal) } : {}),
      items: resolveProducts(req.items, products),
    };
  };
}
