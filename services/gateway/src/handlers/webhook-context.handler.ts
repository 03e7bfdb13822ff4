import type { Kysely } from 'kysely';
import type { Handlers } from '@erp/bus';
import type { webhookGatewaySubjects } from '@erp/contracts';
import type { GatewayDb } from '../db/tables';
import { findWebhookContext } from '../db/webhook-context.repository';

/** Tells webhook-ingest for whom an integration acts: the company's context (when active) and the user's name (when active). */
export function webhookContextHandlers(db: Kysely<GatewayDb>): Handlers<typeof webhookGatewaySubjects> {
  return {
    'gateway.webhook.context': async ({ empresa_id, usuario_id }) => {
      const { empresa, usuario } = await findWebhookContext(db, empresa_id, usuario_id);
      return {
        empresa: empresa ? { id: empresa.id, nombre: empresa.nombre, iva: empresa.iva, venderSinStock: empresa.vender_sin_stock } : null,
        usuario,
      };
    },
  };
}
