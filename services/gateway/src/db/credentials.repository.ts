import { sql, type Kysely } from 'kysely';
import type { Scope } from '@erp/contracts';
import type { GatewayDb } from './tables';

export interface Credential {
  apiKeyId: number;
  /** What the key may do (`recurso:nivel`). */
  alcances: readonly Scope[];
  /** When it stops working (a rotated key's grace end); null: never. */
  expiraEl: Date | null;
  empresa: { id: number; nombre: string; iva: string; venderSinStock: boolean };
  /** The key's user, else the company's first active administrator; null when there is none. */
  usuario: { id: number; nombre: string } | null;
}

/**
 * The active key with this hash, of an active company, with its acting user, in one query. An
 * expired key is found too: the caller tells it apart (`clave_expirada`).
 */
export async function findCredential(db: Kysely<GatewayDb>, keyHash: Buffer): Promise<Credential | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('empresas as e', 'e.id', 'k.empresa_id')
    .leftJoin('usuarios as ku', (join) => join.onRef('ku.id', '=', 'k.usuario_id').on('ku.activo', '=', true))
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('usuarios as a')
          .select(['a.id', 'a.nombre'])
          .whereRef('a.empresa_id', '=', 'e.id')
          .where('a.activo', '=', true)
          .where('a.rol', '=', 'Administrador')
          .orderBy('a.id')
          .limit(1)
          .as('admin'),
      (join) => join.onTrue(),
    )
    .where('k.key_hash', '=', keyHash)
    .where('k.activo', '=', true)
    .where('e.activo', '=', true)
    .select([
      'k.id as api_key_id',
      'k.alcances',
      'k.expira_el',
      'e.id as empresa_id',
      'e.nombre as empresa_nombre',
      sql<string>`e.iva::text`.as('iva'),
      'e.vender_sin_stock',
      'ku.id as key_user_id',
      'ku.nombre as key_user_nombre',
      'admin.id as admin_id',
      'admin.nombre as admin_nombre',
    ])
    .executeTakeFirst();
  if (!row) return undefined;
  const usuario =
    row.key_user_id !== null && row.key_user_nombre !== null
      ? { id: row.key_user_id, nombre: row.key_user_nombre }
      : row.admin_id !== null && row.admin_nombre !== null
        ? { id: row.admin_id, nombre: row.admin_nombre }
        : null;
  return {
    apiKeyId: row.api_key_id,
    alcances: row.alcances,
    expiraEl: row.expira_el,
    empresa: { id: row.empresa_id, nombre: row.empresa_nombre, iva: row.iva, venderSinStock: row.vender_sin_stock },
    usuario,
  };
}
