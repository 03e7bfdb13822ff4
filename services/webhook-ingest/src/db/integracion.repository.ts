import type { Insertable, Kysely, Transaction } from 'kysely';
import type { IntegracionesTable, WebhookDb } from './tables';

type Db = Kysely<WebhookDb> | Transaction<WebhookDb>;

export async function findIntegracionByTokenHash(db: Db, tokenHash: Buffer) {
  return db.selectFrom('integraciones').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function insertIntegracion(db: Db, row: Insertable<IntegracionesTable>): Promise<number> {
  const { id } = await db.insertInto('integraciones').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function replaceToken(db: Db, id: number, tokenHash: Buffer, prefix: string) {
  return db
    .updateTable('integraciones')
    .set({ token_hash: tokenHash, token_prefix: prefix, updated_at: new Date() })
    .where('id', '=', id)
    .returning(['id', 'empresa_id', 'plataforma', 'tienda_credenciales'])
    .executeTakeFirst();
}

/** Remembers the service product an integration's shipping and fees are sold as. */
export async function setProductoEnvio(db: Db, id: number, productoId: number): Promise<void> {
  await db.updateTable('integraciones').set({ producto_envio_id: productoId, updated_at: new Date() }).where('id', '=', id).execute();
}

/** Replaces an integration's sealed shop credentials (a new webhook path, or a key rotation). */
export async function setTiendaCredenciales(db: Db, id: number, sealed: Buffer): Promise<void> {
  await db.updateTable('integraciones').set({ tienda_credenciales: sealed, updated_at: new Date() }).where('id', '=', id).execute();
}

/** Every integration's sealed shop credentials, locked (a reseal rewrites them). */
export async function sealedCredentials(db: Db) {
  const rows = await db
    .selectFrom('integraciones')
    .select(['id', 'empresa_id', 'plataforma', 'tienda_credenciales'])
    .where('tienda_credenciales', 'is not', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map((r) => ({ ...r, tienda_credenciales: r.tienda_credenciales! }));
}
