import { AppError, MAX_SUBSCRIPTIONS, type ParsedRequestOf, type subscriptionsSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { countSuscripciones, insertSuscripcion, lockEmpresaSuscripciones } from '../db/suscripcion.repository';
import type { SubscriptionsDb } from '../db/tables';
import { newSecret } from '../domain/signature';
import { urlProblem, type UrlPolicy } from './url-guard';

type CreateBody = ParsedRequestOf<typeof subscriptionsSubjects, 'subscriptions.subscription.create'>;

/**
 * A new subscription with a new secret: its URL checked against `policy` first, then written
 * under the company's lock of its subscriptions so that no two requests pass the maximum.
 */
export async function createSuscripcion(db: Kysely<SubscriptionsDb>, policy: UrlPolicy, empresaId: number, body: CreateBody) {
  const problem = await urlProblem(body.url, policy);
  if (problem) throw AppError.validation(problem, { url: [problem] });
  return inTransaction(db, async (trx) => {
    await lockEmpresaSuscripciones(trx, empresaId);
    if ((await countSuscripciones(trx, empresaId)) >= MAX_SUBSCRIPTIONS) {
      const message = `La empresa ya tiene ${MAX_SUBSCRIPTIONS} suscripciones, el máximo permitido`;
      throw AppError.rule('limite_suscripciones', message, { _: [message] });
    }
    return insertSuscripcion(trx, {
      empresa_id: empresaId,
      url: body.url,
      eventos: body.events,
      descripcion: body.descripcion ?? null,
      secreto: newSecret(),
      motivo_deshabilitada: null,
    });
  });
}
