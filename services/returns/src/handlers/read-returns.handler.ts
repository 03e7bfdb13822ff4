import type { Kysely } from 'kysely';
import {
  AppError,
  paginate,
  returnsFiltersApplied,
  type ParsedRequestOf,
  type ReplyInputOf,
  type TenantContext,
  type returnsApiSubjects,
} from '@erp/contracts';
import { JsonText, type JsonPageOf } from '@erp/bus';
import { answerChangePage } from '@erp/db';
import { listDevolucionChanges } from '../db/devolucion-feed.repository';
import { findDevolucionJson } from '../db/devolucion-json.repository';
import { listDevoluciones, summarizeDevoluciones } from '../db/devolucion-list.repository';
import type { ReturnsDb } from '../db/tables';
import { summarize } from '../domain/summary';

type Api = typeof returnsApiSubjects;

export function getReturnHandler(db: Kysely<ReturnsDb>) {
  return async ({ id }: ParsedRequestOf<Api, 'returns.return.get'>, ctx: TenantContext) => {
    const devolucion = await findDevolucionJson(db, ctx.empresa.id, id);
    if (devolucion === undefined) throw AppError.notFound('devolucion_no_encontrada', 'Devolución no encontrada');
    return new JsonText(devolucion);
  };
}

export function listReturnsHandler(db: Kysely<ReturnsDb>) {
  return async (
    request: ParsedRequestOf<Api, 'returns.return.list'>,
    ctx: TenantContext,
  ): Promise<JsonPageOf<ReplyInputOf<Api, 'returns.return.list'>> | ReplyInputOf<Api, 'returns.return.list'>> => {
    const filters_applied = {
      ...returnsFiltersApplied(request),
      ...(request.updated_since !== undefined ? { updated_since: request.updated_since } : {}),
    };
    if (request.order_by !== 'updated_at') {
      const { total, json } = await listDevoluciones(db, ctx.empresa.id, request);
      return { items: new JsonText(json), pagination: paginate(request, total), filters_applied };
    }
    const page = await answerChangePage(db, request, (trx, after) => listDevolucionChanges(trx, ctx.empresa.id, request, after));
    return { ...page, filters_applied };
  };
}

export function returnsSummaryHandler(db: Kysely<ReturnsDb>) {
  return async (filters: ParsedRequestOf<Api, 'returns.summary'>, ctx: TenantContext): Promise<ReplyInputOf<Api, 'returns.summary'>> =>
    summarize(await summarizeDevoluciones(db, ctx.empresa.id, filters));
}
