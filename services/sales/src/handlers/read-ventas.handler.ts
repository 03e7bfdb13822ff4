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
import { JsonText, type JsonPageOf } from '@erp/bus';
import { answerChangePage } from '@erp/db';
import type { SalesDb } from '../db/tables';
import { listVentaChanges } from '../db/venta-feed.repository';
import { findVentaJson } from '../db/venta-json.repository';
import { listVentas, summarizeVentas, ventasPageVersion } from '../db/venta-list.repository';
import { summarize } from '../domain/summary';

type Api = typeof salesApiSubjects;

export function getVentaHandler(db: Kysely<SalesDb>) {
  return async ({ id }: ParsedRequestOf<Api, 'sales.sale.get'>, ctx: TenantContext) => {
    const venta = await findVentaJson(db, ctx.empresa.id, id);
    if (venta === undefined) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
    return new JsonText(venta);
  };
}

export function listVentasHandler(db: Kysely<SalesDb>) {
  return async (
    request: ParsedRequestOf<Api, 'sales.sale.list'>,
    ctx: TenantContext,
  ): Promise<JsonPageOf<ReplyInputOf<Api, 'sales.sale.list'>> | ReplyInputOf<Api, 'sales.sale.list'>> => {
    const { updated_since, cursor: _cursor, ...paged } = request;
    const filters_applied = { ...salesFiltersApplied(request), ...(updated_since !== undefined ? { updated_since } : {}) };
    if (request.order_by !== 'updated_at') {
      const { total, json, version } = await listVentas(db, ctx.empresa.id, paged);
      return { items: new JsonText(json), pagination: paginate(request, total), filters_applied, version };
    }
    const page = await answerChangePage(db, request, (trx, after) => listVentaChanges(trx, ctx.empresa.id, request, after));
    return { ...page, filters_applied };
  };
}

/** The version of the page `sales.sale.list` would answer, without building it; none in cursor mode. */
export function ventasPageVersionHandler(db: Kysely<SalesDb>) {
  return async (
    request: ParsedRequestOf<Api, 'sales.sale.version'>,
    ctx: TenantContext,
  ): Promise<ReplyInputOf<Api, 'sales.sale.version'>> => {
    if (request.order_by === 'updated_at') return {};
    const { updated_since: _since, cursor: _cursor, ...paged } = request;
    return { version: await ventasPageVersion(db, ctx.empresa.id, paged) };
  };
}

export function ventasSummaryHandler(db: Kysely<SalesDb>) {
  return async (filters: ParsedRequestOf<Api, 'sales.summary'>, ctx: TenantContext): Promise<ReplyInputOf<Api, 'sales.summary'>> => {
    const rows = await summarizeVentas(db, ctx.empresa.id, filters);
    return summarize(rows, filters.estado ? [filters.estado] : ESTADOS_VENTA);
  };
}
