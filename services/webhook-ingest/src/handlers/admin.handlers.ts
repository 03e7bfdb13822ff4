import { enqueueEvent, type Handlers } from '@erp/bus';
import { AppError, webhookEvents, webhookPath, type webhookSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely, Transaction } from 'kysely';
import { listEntregas, reopenFailed } from '../db/entrega.repository';
import { insertIntegracion, replaceToken } from '../db/integracion.repository';
import type { WebhookDb } from '../db/tables';
import { generateToken, hashToken, tokenPrefix } from '../domain/token';

type AdminSubjects = Omit<typeof webhookSubjects, 'webhooks.receive'>;

/**
 * Back office of webhook-ingest: seeding integrations, failed deliveries and their replay, token
 * rotation. A change of integrations is announced to every replica (an event) and applied at once
 * in this one (`onIntegracionChanged`), so a rotated token stops working here at once.
 */
export function adminHandlers(db: Kysely<WebhookDb>, hooks: { onEnqueued: () => void; onIntegracionChanged: () => void }): Handlers<AdminSubjects> {
  const { onEnqueued, onIntegracionChanged } = hooks;
  const announce = (trx: Transaction<WebhookDb>, id: number, empresaId: number) =>
    enqueueEvent(trx, webhookEvents, 'events.webhooks.integration.changed', { id_integracion: id, empresa_id: empresaId });
  return {
    'webhooks.admin.seed': async (req) => {
      const seeded = await inTransaction(db, async (trx) => {
        const out: Record<string, { id: number; token: string; path: string }> = {};
        for (const i of req.integraciones) {
          if (out[i.ref]) throw AppError.validation(`La integración "${i.ref}" está repetida`);
          const ref = (kind: string, name: string | undefined, required: boolean): number | null => {
            if (name === undefined) return null;
            const map = req.refs[kind];
            // A section no service has loaded yet leaves the reference empty: processing reports it.
            if (!map) {
              if (required) throw AppError.validation(`La integración "${i.ref}" usa ${kind} "${name}", que no se cargó`);
              return null;
            }
            const id = map[name];
            if (id === undefined) throw AppError.validation(`La integración "${i.ref}" usa ${kind} desconocido "${name}"`);
            return id;
          };
          const token = i.token ?? generateToken();
          const id = await insertIntegracion(trx, {
            empresa_id: req.empresa_id,
            plataforma: i.plataforma,
            usuario_id: ref('usuarios', i.usuario, true)!,
            sucursal_id: ref('sucursales', i.sucursal, true)!,
            bodega_id: ref('bodegas', i.bodega, true)!,
            documento_id: ref('documentos', i.documento, false),
            canal_id: ref('canales', i.canal, false),
            producto_envio_id: ref('productos', i.producto_envio, false),
            token_hash: hashToken(token),
            token_prefix: tokenPrefix(token),
            secreto: i.secreto ?? null,
            activo: i.activo,
          });
          await announce(trx, id, req.empresa_id);
          out[i.ref] = { id, token, path: webhookPath(i.plataforma, token) };
        }
        return { integraciones: out };
      });
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
        if (replaced) await announce(trx, replaced.id, replaced.empresa_id);
        return replaced;
      });
      if (!row) throw AppError.notFound('Integración no encontrada');
      onEnqueued();
      onIntegracionChanged();
      return { id: row.id, token, path: webhookPath(row.plataforma, token) };
    },
  };
}
