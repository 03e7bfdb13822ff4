import type { Kysely } from 'kysely';
import {
  AppError,
  ESTADOS_VENTA,
  paginate,
  salesFiltersApplied,
  type ParsedRequestOf,
  type ReplyInputOf,
  type TenantContext,
  type salesApiSubjects,
} from '@erp/contracts';
import type { SalesDb } from '../db/tables';
import { findSale, listSales, summarizeSales } from '../db/venta.repository';
import { summarize } from '../domain/summary';

type Api = typeof salesApiSubjects;

export function getSaleHandler(db: Kysely<SalesDb>) {
  return async ({ id }: ParsedRequestOf<Api, 'sales.sale.get'>, ctx: TenantContext) => {
    const venta = await findSale(db, ctx.empresa.id, id);
    if (!venta) throw AppError.notFound('Venta no encontrada');
    return venta;
  };
}

export function listSalesHandler(db: Kysely<SalesDb>) {
  return async (request: ParsedRequestOf<Api, 'sales.sale.list'>, ctx: TenantContext): Promise<ReplyInputOf<Api, 'sales.sale.list'>> => {
    const { total, items } = await listSales(db, ctx.empresa.id, request);
    return { items, pagination: paginate(request, total), filters_applied: salesFiltersApplied(request) };
  };
}

export function salesSummaryHandler(db: Kysely<SalesDb>) {
  return async (filters: ParsedRequestOf<Api, 'sales.summary'>, ctx: TenantContext): Promise<ReplyInputOf<Api, 'sales.summary'>> => {
    const rows = await summarizeSales(db, ctx.empresa.id, filters);
    return summarize(rows, filters.estado ? [filters.estado] : ESTADOS_VENTA);
  };
}
