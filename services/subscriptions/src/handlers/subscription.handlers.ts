import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Handlers } from '@erp/bus';
import { AppError, paginate, SECRET_OVERLAP_HOURS, type subscriptionsSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { SubscriptionsConfig } from '../config';
import { listIntentos } from '../db/entrega.repository';
import { listEventos, PING, positionOf, queueReplay, recordPing } from '../db/evento.repository';
import { deleteSuscripcion, findSuscripcion, listSuscripciones, rotateSecreto } from '../db/suscripcion.repository';
import type { SubscriptionsDb } from '../db/tables';
import { toEvento } from '../domain/evento-row';
import { newSecret } from '../domain/signature';
import { toSuscripcion } from '../domain/suscripcion-row';
import { createSuscripcion } from '../flows/create-suscripcion.flow';
import { updateSuscripcionFlow } from '../flows/update-suscripcion.flow';

const NOT_FOUND = 'Suscripción no encontrada';

/** The partner API of subscriptions and the event feed, every query scoped to the caller's company. */
export function subscriptionHandlers(
  db: Kysely<SubscriptionsDb>,
  config: Readonly<SubscriptionsConfig>,
): Handlers<typeof subscriptionsSubjects> {
  const policy = { allowPrivate: config.EVENTS_ALLOW_PRIVATE_URLS, allowHttp: config.EVENTS_ALLOW_HTTP };
  const owned = async (empresaId: number, id: number) => {
    const row = await findSuscripcion(db, empresaId, id);
    if (!row) throw AppError.notFound('suscripcion_no_encontrada', NOT_FOUND);
    return row;
  };
  return {
    'subscriptions.subscription.create': async (body, ctx) => {
      const row = await createSuscripcion(db, policy, ctx.empresa.id, body);
      return { ...toSuscripcion(row), secret: row.secreto };
    },
    'subscriptions.subscription.list': async (page, ctx) => {
      const { total, items } = await listSuscripciones(db, ctx.empresa.id, page);
      return { items: items.map(toSuscripcion), pagination: paginate(page, total), filters_applied: {} };
    },
    'subscriptions.subscription.get': async ({ id }, ctx) => toSuscripcion(await owned(ctx.empresa.id, id)),
    'subscriptions.subscription.delete': async ({ id }, ctx) => {
      const row = await deleteSuscripcion(db, ctx.empresa.id, id);
      if (!row) throw AppError.notFound('suscripcion_no_encontrada', NOT_FOUND);
      return toSuscripcion(row);
    },
    'subscriptions.subscription.update': async (request, ctx) =>
      toSuscripcion(await updateSuscripcionFlow(db, policy, ctx.empresa.id, request)),
    'subscriptions.subscription.rotate': async ({ id }, ctx) => {
      const row = await rotateSecreto(db, ctx.empresa.id, id, newSecret(), SECRET_OVERLAP_HOURS);
      if (!row) throw AppError.notFound('suscripcion_no_encontrada', NOT_FOUND);
      return { secret: row.secreto, secreto_anterior_hasta: row.secreto_anterior_hasta!.toISOString() };
    },
    'subscriptions.subscription.ping': async ({ id }, ctx) => {
      const eventId = `evt_${randomBytes(16).toString('hex')}`;
      await inTransaction(db, async (trx) => {
        const row = await findSuscripcion(trx, ctx.empresa.id, id);
        if (!row) throw AppError.notFound('suscripcion_no_encontrada', NOT_FOUND);
        if (!row.enable) {
          const message = 'La suscripción está deshabilitada; habilítela con PATCH enable 1 antes de probarla';
          throw AppError.rule('suscripcion_deshabilitada', message, { enable: [message] });
        }
        await recordPing(trx, row.id, ctx.empresa.id, eventId, new Date());
      });
      return { event_id: eventId, type: PING };
    },
    'subscriptions.delivery.list': async ({ id, ...page }, ctx) => {
      await owned(ctx.empresa.id, id);
      const { total, items } = await listIntentos(db, id, page);
      return {
        items: items.map((r) => ({
          id: r.id,
          event_id: r.evento_id,
          type: r.tipo,
          attempt: r.intento,
          status: r.status,
          error: r.error,
          duration_ms: r.duracion_ms,
          timestamp: r.created_at,
        })),
        pagination: paginate(page, total),
        filters_applied: {},
      };
    },
    'subscriptions.subscription.replay': async ({ id, desde }, ctx) => {
      const since = new Date(desde);
      if (Number.isNaN(since.getTime())) throw AppError.validation('Fecha inválida', { desde: ['Debe ser una fecha y hora ISO 8601'] });
      const encolados = await inTransaction(db, async (trx) => {
        const row = await findSuscripcion(trx, ctx.empresa.id, id);
        if (!row) throw AppError.notFound('suscripcion_no_encontrada', NOT_FOUND);
        return queueReplay(trx, row.id, ctx.empresa.id, row.eventos, since);
      });
      return { encolados };
    },
    'subscriptions.event.list': async ({ after, types, per_page }, ctx) => {
      let position = 0;
      if (after !== undefined) {
        const found = await positionOf(db, ctx.empresa.id, after);
        if (found === undefined)
          throw new AppError('BAD_REQUEST', 'Parámetros inválidos', { after: ['El evento no existe o ya no se conserva'] });
        position = found;
      }
      const rows = await listEventos(db, ctx.empresa.id, { after: position, ...(types ? { types } : {}), limit: per_page + 1 });
      const page = rows.slice(0, per_page);
      return {
        items: page.map(toEvento),
        pagination: { per_page, next_after: page.at(-1)?.id ?? after ?? null, has_more: rows.length > per_page },
      };
    },
  };
}
