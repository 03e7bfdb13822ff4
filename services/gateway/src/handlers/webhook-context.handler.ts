import { sql, type Kysely } from 'kysely';
import type { Handlers } from '@erp/bus';
import type { webhookGatewaySubjects } from '@erp/contracts';
import type { GatewayDb } from '../db/tables';

/** Tells webhook-ingest for whom an integration acts: the company's context (when active) and the user's name (when active). */
export function webhookContextHandlers(db: Kysely<GatewayDb>): Handlers<typeof webhookGatewaySubjects> {
  return {
    'gateway.webhook.context': async ({ empresa_id, usuario_id }) => {
      const empresa = await db
        .selectFrom('empresas')
        .select(['id', 'nombre', sql<string>`iva::text`.as('iva'), 'vender_sin_stock'])
        .where('id', '=', empresa_id)
        .where('activo', '=', true)
        .executeTakeFirst();
      const usuario = await db
        .selectFrom('usuarios')
        .select(['id', 'nombre'])
        .where('id', '=', usuario_id)
        .where('empresa_id', '=', empresa_id)
        .where('activo', '=', true)
        .executeTakeFirst();
      return {
        empresa: empresa ? { id: empresa.id, nombre: empresa.nombre, iva: empresa.iva, venderSinStock: empresa.vender_sin_stock } : null,
        usuario: usuario ?? null,
      };
    },
  };
}
