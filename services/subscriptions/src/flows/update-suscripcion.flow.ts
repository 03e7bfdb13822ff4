import { AppError, type ParsedRequestOf, type subscriptionsSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { updateSuscripcion } from '../db/suscripcion.repository';
import type { SubscriptionsDb } from '../db/tables';
import { urlProblem, type UrlPolicy } from './url-guard';

type UpdateRequest = ParsedRequestOf<typeof subscriptionsSubjects, 'subscriptions.subscription.update'>;

/** A partner's changes to its subscription: a new URL is checked against `policy` as at creation. */
export async function updateSuscripcionFlow(db: Kysely<SubscriptionsDb>, policy: UrlPolicy, empresaId: number, request: UpdateRequest) {
  if (request.url !== undefined) {
    const problem = await urlProblem(request.url, policy);
    if (problem) throw AppError.validation(problem, { url: [problem] });
  }
  const row = await inTransaction(db, (trx) =>
    updateSuscripcion(trx, empresaId, request.id, {
      ...(request.url !== undefined ? { url: request.url } : {}),
      ...(request.events !== undefined ? { eventos: request.events } : {}),
      ...(request.descripcion !== undefined ? { descripcion: request.descripcion } : {}),
      ...(request.enable !== undefined ? { enable: request.enable === 1 } : {}),
    }),
  );
  if (!row) throw AppError.notFound('suscripcion_no_encontrada', 'Suscripción no encontrada');
  return row;
}
