import type { Kysely } from 'kysely';
import { InventoryListQuery, InventoryListRequest, SalesFilters, SalesListQuery, SalesListRequest, SalesSummaryQuery } from '@erp/contracts';
import { findProductWithStock, listProducts, summarizeInventory } from '../../../services/inventory/src/db/product.repository';
import type { InventoryDb } from '../../../services/inventory/src/db/tables';
import { findSale, listSales, summarizeSales } from '../../../services/sales/src/db/venta.repository';
import type { SalesDb } from '../../../services/sales/src/db/tables';

export type DirectQuery = (id: number | undefined, query: Record<string, string>) => Promise<unknown>;

/**
 * Each read route of the API mapped to the repository function its service runs, called
 * directly: the baseline serves these, and `--explain` prints their plans. The query string is
 * parsed with the same contracts as on the full path, so defaults (page size, order) match.
 */
export function directQueries(inventory: Kysely<InventoryDb>, sales: Kysely<SalesDb>, empresaId: number): Array<[RegExp, DirectQuery]> {
  return [
    [/^\/inventory\/summary$/, () => summarizeInventory(inventory, empresaId)],
    [/^\/inventory\/(\d+)$/, (id) => findProductWithStock(inventory, empresaId, id!)],
    [/^\/inventory$/, (_id, query) => listProducts(inventory, empresaId, InventoryListRequest.parse(InventoryListQuery.parse(query)))],
    [/^\/sales\/summary$/, (_id, query) => summarizeSales(sales, empresaId, SalesFilters.parse(SalesSummaryQuery.parse(query)))],
    [/^\/sales\/(\d+)$/, (id) => findSale(sales, empresaId, id!)],
    [/^\/sales$/, (_id, query) => listSales(sales, empresaId, SalesListRequest.parse(SalesListQuery.parse(query)))],
  ];
}

/** Runs the direct query of a path (`/sales?page=2`); undefined when no route matches. */
export function runDirect(routes: Array<[RegExp, DirectQuery]>, pathAndQuery: string): Promise<unknown> | undefined {
  const url = new URL(pathAndQuery, 'http://direct');
  for (const [pattern, run] of routes) {
    const match = pattern.exec(url.pathname);
    if (match) return run(match[1] === undefined ? undefined : Number(match[1]), Object.fromEntries(url.searchParams));
  }
  return undefined;
}
