import type { Kysely } from 'kysely';
import { AppError, paginate, returnsFiltersApplied, type ParsedRequestOf, type ReplyInputOf, type TenantContext, type returnsApiSubjects } from '@erp/contracts';
import { findReturn, listReturns, summarizeReturns } from '../db/devolucion.repository';
import type { ReturnsDb } from '../db/tables';
import { summarize } from '../domain/summary';

type Api = typeof returnsApiSubjects;

export function getReturnHandler(db: Kysely<ReturnsDb>) {
  return async ({ id }: ParsedRequestOf<Api, 'returns.return.get'>, ctx: TenantContext) => {
    const devolucion = await findReturn(db, ctx.empresa.id, id);
    if (!devolucion) throw AppError.notFound('Devolución no encontrada');
    return devolucion;
  };
}

export function listReturnsHandler(db: Kysely<ReturnsDb>) {
  return async (request: ParsedRequestOf<Api, 'returns.return.list'>, ctx: TenantContext): Promise<ReplyInputOf<Api, 'returns.return.list'>> => {
    const { total, items } = await listReturns(db, ctx.empresa.id, request);
    return { items, pagination: paginate(request, total), filters_applied: returnsFiltersApplied(request) };
  };
}

export function returnsSummaryHandler(db: Kysely<ReturnsDb>) {
  return async (filters: ParsedRequestOf<Api, 'returns.summary'>, ctx: TenantContext): Promise<ReplyInputOf<Api, 'returns.summary'>> =>
    summarize(await summarizeReturns(db, ctx.empresa.id, filters));
}
