import type { Kysely } from 'kysely';
import { JsonText } from '@erp/bus';
import {
  InventoryListQuery,
  InventoryListRequest,
  ReturnsListQuery,
  ReturnsListRequest,
  ReturnsSummaryQuery,
  ReturnsSummaryRequest,
  SalesFilters,
  SalesListQuery,
  SalesListRequest,
  SalesSummaryQuery,
} from '@erp/contracts';
import { findProductoJson } from '../../../services/inventory/src/db/producto-json.repository';
import { listProductos, summarizeInventario } from '../../../services/inventory/src/db/producto-list.repository';
import type { InventoryDb } from '../../../services/inventory/src/db/tables';
import { findDevolucionJson } from '../../../services/returns/src/db/devolucion-json.repository';
import { listDevoluciones, summarizeDevoluciones } from '../../../services/returns/src/db/devolucion-list.repository';
import type { ReturnsDb } from '../../../services/returns/src/db/tables';
import { findVentaJson } from '../../../services/sales/src/db/venta-json.repository';
import { listVentas, summarizeVentas } from '../../../services/sales/src/db/venta-list.repository';
import type { SalesDb } from '../../../services/sales/src/db/tables';

/** Values, JSON text as its service passes it on, or a page whose items are JSON text; undefined when not found. */
export type DirectQuery = (id: number | undefined, query: Record<string, string>) => Promise<unknown>;

export interface DirectDbs {
  inventory: Kysely<InventoryDb>;
  sales: Kysely<SalesDb>;
  returns: Kysely<ReturnsDb>;
}

const json = (text: string | undefined) => (text === undefined ? undefined : new JsonText(text));
const page = ({ total, json: items }: { total: number; json: string }) => ({ total, items: new JsonText(items) });

/**
 * Each read route of the API mapped to the repository function its service runs, called
 * directly: the baseline serves these, and `--explain` prints their plans. The query string is
 * parsed with the same contracts as on the full path, so defaults (page size, order) match.
 */
export function directQueries({ inventory, sales, returns }: DirectDbs, empresaId: number): Array<[RegExp, DirectQuery]> {
  return [
    [/^\/inventory\/summary$/, () => summarizeInventario(inventory, empresaId)],
    [/^\/inventory\/(\d+)$/, async (id) => json(await findProductoJson(inventory, empresaId, id!))],
    [
      /^\/inventory$/,
      async (_id, query) => page(await listProductos(inventory, empresaId, InventoryListRequest.parse(InventoryListQuery.parse(query)))),
    ],
    [/^\/sales\/summary$/, (_id, query) => summarizeVentas(sales, empresaId, SalesFilters.parse(SalesSummaryQuery.parse(query)))],
    [/^\/sales\/(\d+)$/, async (id) => json(await findVentaJson(sales, empresaId, id!))],
    [/^\/sales$/, async (_id, query) => page(await listVentas(sales, empresaId, SalesListRequest.parse(SalesListQuery.parse(query))))],
    [
      /^\/returns\/summary$/,
      (_id, query) => summarizeDevoluciones(returns, empresaId, ReturnsSummaryRequest.parse(ReturnsSummaryQuery.parse(query))),
    ],
    [/^\/returns\/(\d+)$/, async (id) => json(await findDevolucionJson(returns, empresaId, id!))],
    [
      /^\/returns$/,
      async (_id, query) => page(await listDevoluciones(returns, empresaId, ReturnsListRequest.parse(ReturnsListQuery.parse(query)))),
    ],
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
