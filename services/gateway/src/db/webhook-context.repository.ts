import { sql, type Kysely } from 'kysely';
import type { GatewayDb } from './tables';

/** The company when active (its VAT rate as exact text), and its user when active; each null otherwise. */
export async function findWebhookContext(db: Kysely<GatewayDb>, empresaId: number, usuarioId: number) {
  const empresa = await db
    .selectFrom('empresas')
    .select(['id', 'nombre', sql<string>`iva::text`.as('iva'), 'vender_sin_stock'])
    .where('id', '=', empresaId)
    .where('activo', '=', true)
    .executeTakeFirst();
  const usuario = await db
    .selectFrom('usuarios')
    .select(['id', 'nombre'])
    .where('id', '=', usuarioId)
    .where('empresa_id', '=', empresaId)
    .where('activo', '=', true)
    .executeTakeFirst();
  return { empresa: empresa ?? null, usuario: usuario ?? null };
}
