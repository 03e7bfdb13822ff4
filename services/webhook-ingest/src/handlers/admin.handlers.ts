import { enqueueEvent, type Handlers } from '@erp/bus';
import { AppError, webhookIntakeEvents, webhookPath, type webhookSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { listEntregas, reopenFailed } from '../db/entrega.repository';
import { replaceToken, sealedCredentials, setTiendaCredenciales } from '../db/integracion.repository';
import type { WebhookDb } from '../db/tables';
import { credentialsContext, openSecrets, sealSecrets, sealedWith, type Keyring } from '../domain/credentials';
import { generateToken, hashToken, tokenPrefix } from '../domain/token';
import { announceIntegracion, seedIntegraciones } from '../flows/seed-integraciones.flow';
import type { ShopSync } from '../shop-sync';

type AdminSubjects = Omit<typeof webhookSubjects, 'webhooks.receive'>;

/**
 * Back office of webhook-ingest: seeding integrations, failed deliveries and their replay, token
 * rotation. A change of integrations is announced to every replica (an event) and applied at once
 * in this one (`onIntegracionChanged`), so a rotated token stops working here at once.
 */
export function adminHandlers(
  db: Kysely<WebhookDb>,
  hooks: {
    onEnqueued: () => void;
    onIntegracionChanged: () => void;
    keyring: Keyring;
    shops: () => ShopSync;
  },
): Handlers<AdminSubjects> {
  const { onEnqueued, onIntegracionChanged, keyring } = hooks;
  return {
    'webhooks.admin.seed': async (req) => {
      const seeded = await inTransaction(db, (trx) => seedIntegraciones(trx, req, keyring));
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
          await enqueueEvent(trx, webhookIntakeEvents, 'intake.webhooks.delivery.received', {
            id_entrega: row.id,
            empresa_id: row.empresa_id,
          });
        }
        return rows.map((r) => r.id).sort((a, b) => a - b);
      });
      if (reopened.length > 0) onEnqueued();
      return { reencoladas: reopened };
    },
    'webhooks.admin.credentials.reseal': async () => {
      if (!keyring.current) throw AppError.validation('No hay clave configurada (PLATFORM_CREDENTIALS_KEYS)');
      const current = keyring.current;
      const reselladas = await inTransaction(db, async (trx) => {
        let n = 0;
        for (const row of await sealedCredentials(trx)) {
          if (sealedWith(row.tienda_credenciales) === current) continue;
          const context = credentialsContext(row.empresa_id, row.plataforma);
          await setTiendaCredenciales(trx, row.id, sealSecrets(keyring, openSecrets(keyring, row.tienda_credenciales, context), context));
          n++;
        }
        return n;
      });
      return { reselladas, clave: current };
    },
    'webhooks.admin.drift': async (req) => hooks.shops().drift(req),
    'webhooks.admin.reconcile': async ({ id_integracion }) => hooks.shops().reconcile(id_integracion),
    'webhooks.admin.integration.rotate-token': async ({ id }) => {
      const token = generateToken();
      const row = await inTransaction(db, async (trx) => {
        const replaced = await replaceToken(trx, id, hashToken(token), tokenPrefix(token));
        if (!replaced) return undefined;
        if (replaced.tienda_credenciales) {
          // The sealed webhook path carries the token: sealed again with the new one.
          const context = credentialsContext(replaced.empresa_id, replaced.plataforma);
          const secrets = openSecrets(keyring, replaced.tienda_credenciales, context);
          const ruta = webhookPath(replaced.plataforma, token);
          await setTiendaCredenciales(trx, replaced.id, sealSecrets(keyring, { ...secrets, ruta }, context));
        }
        await announceIntegracion(trx, replaced.id, replaced.empresa_id);
        return replaced;
      });
      if (!row) throw AppError.notFound('recurso_no_encontrado', 'Integración no encontrada');
      onEnqueued();
      onIntegracionChanged();
      return { id: row.id, token, path: webhookPath(row.plataforma, token) };
    },
  };
}
