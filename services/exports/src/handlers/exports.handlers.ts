import type { Kysely } from 'kysely';
import {
  AppError,
  MAX_EXPORTACIONES_EN_CURSO,
  paginate,
  type ParsedRequestOf,
  type ReplyInputOf,
  type TenantContext,
  type exportsSubjects,
} from '@erp/contracts';
import type { Bus, Handlers } from '@erp/bus';
import { inTransaction } from '@erp/db';
import {
  cancelExportacion,
  countEnCurso,
  findExportacion,
  forgetArchivo,
  insertExportacion,
  listExportaciones,
  lockEmpresaExportaciones,
  lockExportacion,
} from '../db/exportacion.repository';
import type { ExportsDb } from '../db/tables';
import { toExportacion } from '../domain/exportacion';
import { removeArchivo } from '../flows/remove-archivo.flow';

type Api = typeof exportsSubjects;
const NOT_FOUND = 'Exportación no encontrada';

/** The exports' job records: create (queued for the worker), read, list, cancel, and where a file is. */
export function exportsHandlers(db: Kysely<ExportsDb>, bus: Bus, onCreated: () => void): Handlers<Api> {
  return {
    'exports.create': async (body: ParsedRequestOf<Api, 'exports.create'>, ctx: TenantContext) => {
      const row = await inTransaction(db, async (trx) => {
        await lockEmpresaExportaciones(trx, ctx.empresa.id);
        if ((await countEnCurso(trx, ctx.empresa.id)) >= MAX_EXPORTACIONES_EN_CURSO)
          throw new AppError(
            'CONFLICT',
            `La empresa ya tiene ${MAX_EXPORTACIONES_EN_CURSO} exportaciones en curso; espere a que termine una o cancele una con DELETE /exports/{id}`,
            undefined,
            { reason: 'exportaciones_en_curso' },
          );
        return insertExportacion(trx, { empresaId: ctx.empresa.id, recurso: body.recurso, filtros: body.filtros, contexto: ctx });
      });
      onCreated();
      return toExportacion(row);
    },
    'exports.get': async ({ id }, ctx) => {
      const row = await findExportacion(db, ctx.empresa.id, id);
      if (!row) throw AppError.notFound('exportacion_no_encontrada', NOT_FOUND);
      return toExportacion(row);
    },
    'exports.list': async (page, ctx): Promise<ReplyInputOf<Api, 'exports.list'>> => {
      const { total, rows } = await listExportaciones(db, ctx.empresa.id, page);
      return { items: rows.map(toExportacion), pagination: paginate(page, total), filters_applied: {} };
    },
    'exports.cancel': async ({ id }, ctx) => {
      const { before, after } = await inTransaction(db, async (trx) => {
        const row = await lockExportacion(trx, ctx.empresa.id, id);
        if (!row) throw AppError.notFound('exportacion_no_encontrada', NOT_FOUND);
        return { before: row, after: await cancelExportacion(trx, row) };
      });
      // Removed after the commit: a failure here leaves a file nothing points to, which the
      // worker's sweep finds in its record and removes.
      if (before.objeto) {
        await removeArchivo(bus, before.recurso, before.objeto, ctx.requestId);
        await forgetArchivo(db, before.objeto);
      }
      return toExportacion(after);
    },
    'exports.download': async ({ id }, ctx) => {
      const row = await findExportacion(db, ctx.empresa.id, id);
      if (!row) throw AppError.notFound('exportacion_no_encontrada', NOT_FOUND);
      if (row.estado !== 'completada')
        throw new AppError('CONFLICT', `La exportación está ${row.estado}: solo una exportación completada se puede descargar`, undefined, {
          reason: 'exportacion_no_descargable',
        });
      if (row.objeto === null)
        throw AppError.notFound('exportacion_no_encontrada', 'El archivo de la exportación ya no existe (expiró o se eliminó)');
      return { objeto: row.objeto, objetos: row.objetos!, bytes: Number(row.bytes) };
    },
  };
}
