import { sql, type Kysely, type Transaction } from 'kysely';
import type { Plataforma } from '@erp/contracts';
import type { WebhookDb } from './tables';

type Db = Kysely<WebhookDb> | Transaction<WebhookDb>;

/** Our product for each of these platform ids that has a stored mapping. */
export async function findMapeos(db: Db, empresaId: number, plataforma: Plataforma, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('mapeos_producto')
    .select(['id_externo', 'producto_id'])
    .where('empresa_id', '=', empresaId)
    .where('plataforma', '=', plataforma)
    .where('id_externo', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id_externo, r.producto_id]));
}

/** The mapping of one platform product, locked (product deliveries of it apply one at a time). */
export async function lockMapeo(trx: Transaction<WebhookDb>, empresaId: number, plataforma: Plataforma, idExterno: string) {
  return trx
    .selectFrom('mapeos_producto')
    .select(['producto_id', 'version'])
    .where('empresa_id', '=', empresaId)
    .where('plataforma', '=', plataforma)
    .where('id_externo', '=', idExterno)
    .forUpdate()
    .executeTakeFirst();
}

/** Points a platform id at our product; `version` is kept unless given (orders do not version products). */
export async function upsertMapeo(
  db: Db,
  row: { empresa_id: number; plataforma: Plataforma; id_externo: string; producto_id: number; version?: Date | null },
): Promise<void> {
  await db
    .insertInto('mapeos_producto')
    .values({ ...row, version: row.version ?? null })
    .onConflict((oc) =>
      oc.columns(['empresa_id', 'plataforma', 'id_externo']).doUpdateSet({
        producto_id: row.producto_id,
        ...(row.version !== undefined ? { version: row.version } : {}),
        updated_at: sql<Date>`now()`,
      }),
    )
    .execute();
}
