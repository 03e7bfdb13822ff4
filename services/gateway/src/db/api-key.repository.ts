import { sql, type Kysely, type Transaction } from 'kysely';
import type { GatewayDb } from './tables';

type Db = Kysely<GatewayDb> | Transaction<GatewayDb>;

export async function insertApiKey(
  db: Db,
  key: { empresa_id: number; usuario_id: number | null; key_hash: Buffer; prefix: string; activo: boolean },
): Promise<number> {
  const { id } = await db
    .insertInto('api_keys')
    .values({ ...key, revoked_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Deactivates the key, keeping the first revocation time; undefined when there is no such key. */
export async function revokeApiKey(db: Db, id: number): Promise<{ id: number; empresa_id: number } | undefined> {
  return db
    .updateTable('api_keys')
    .set({ activo: false, revoked_at: sql<Date>`coalesce(revoked_at, now())` })
    .where('id', '=', id)
    .returning(['id', 'empresa_id'])
    .executeTakeFirst();
}
