import { enqueueEvent, type Handlers } from '@erp/bus';
import { AppError, webhookEvents, webhookPath, type webhookSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { listEntregas, reopenFailed } from '../db/entrega.repository';
import { replaceToken } from '../db/integracion.repository';
import type { WebhookDb } from '../db/tables';
import { generateToken, hashToken, tokenPrefix } from '../domain/token';
import { announceIntegracion, seedIntegraciones } from '../flows/seed-integraciones.flow';

type AdminSubjects = Omit<typeof webhookSubjects, 'webhooks.receive'>;

/**
 * Back office of webhook-ingest: seeding integrations, failed deliveries and their replay, token
 * rotation. A change of integrations is announced to every replica (an event) and applied at once
 * in this one (`onIntegracionChanged`), so a rotated token stops working here at once.
 */
export function adminHandlers(
  db: Kysely<WebhookDb>,
  hooks: { onEnqueued: () => void; onIntegracionChanged: () => void },
): Handlers<AdminSubjects> {
  const { onEnqueued, onIntegracionChanged } = hooks;
  return {
    'webhooks.admin.seed': async (req) => {
      const seeded = await inTransaction(db, (trx) => seedIntegraciones(trx, req));
      if (Object.keys(seeded.integraciones).length > 0) {
        onEnqueued();
        onIntegracionChanged();
      }
      return seeded;
    },
    'webhooks.admin.delivery.list': async (req) => listEntregas(db, req),
    'webhooks.admin.delivery.replay': async (req) => {
      if (!req.ids && req.empresa_id === undefined) {
        throw AppError.validation('Indique las entregas (ids) o la empresa cuyas entregas fallidas se reprocesan');
      }
      const reopened = await inTransaction(db, async (trx) => {
        const rows = await reopenFailed(trx, req);
        for (const row of rows) {
          await enqueueEvent(trx, webhookEvents, 'events.webhooks.delivery.received', { id_entrega: row.id, empresa_id: row.empresa_id });
        }
        return rows.map((r) => r.id).sort((a, b) => a - b);
      });
      if (reopened.length > 0) onEnqueued();
      return { reencoladas: reopened };
    },
    'webhooks.admin.integration.rotate-token': async ({ id }) => {
      const token = generateToken();
      const row = await inTransaction(db, async (trx) => {
        const replaced = await replaceToken(trx, id, hashToken(token), tokenPrefix(token));
        if (replaced) await announceIntegracion(trx, replaced.id, replaced.empresa_id);
        return replaced;
      });
      if (!row) throw AppError.notFound('recurso_no_encontrado', 'Integración no encontrada');
      onEnqueued();
      onIntegracionChanged();
      return { id: row.id, token, path: webhookPath(row.plataforma, token) };
    },
  };
}
