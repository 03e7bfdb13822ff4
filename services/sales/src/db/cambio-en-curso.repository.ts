import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { millisecondsAgo } from '@erp/db';
import type { SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

/** Records, committed at once, that a change of the sale that may move its stock begins; answers its key. */
export async function insertCambioEnCurso(db: Kysely<SalesDb>, empresaId: number, ventaId: number): Promise<string> {
  const clave = randomUUID();
  await db.insertInto('cambios_en_curso').values({ empresa_id: empresaId, clave, venta_id: ventaId }).execute();
  return clave;
}

/** Removes a change's record, in the transaction that commits the change. */
export async function deleteCambioEnCurso(db: Db, empresaId: number, clave: string): Promise<void> {
  await db.deleteFrom('cambios_en_curso').where('empresa_id', '=', empresaId).where('clave', '=', clave).execute();
}

/** Sales with a change recorded more than `olderThanMs` ago and never committed, oldest first. */
export async function ventasWithStaleCambios(
  db: Db,
  olderThanMs: number,
  limit: number,
): Promise<Array<{ empresa_id: number; venta_id: number }>> {
  return db
    .selectFrom('cambios_en_curso')
    .select(['empresa_id', 'venta_id'])
    .where('created_at', '<', millisecondsAgo(olderThanMs))
    .groupBy(['empresa_id', 'venta_id'])
    .orderBy(sql`min(created_at)`)
    .limit(limit)
    .execute();
}

/** Removes the sale's changes recorded more than `olderThanMs` ago: the caller squared what they left. */
export async function deleteStaleCambios(db: Db, empresaId: number, ventaId: number, olderThanMs: number): Promise<void> {
  await db
    .deleteFrom('cambios_en_curso')
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', ventaId)
    .where('created_at', '<', millisecondsAgo(olderThanMs))
    .execute();
}
