import type { Insertable, Kysely, Transaction } from 'kysely';
import type { PackagesDb, PaquetesTable } from './tables';

type Db = Kysely<PackagesDb> | Transaction<PackagesDb>;

export type NewPaquete = Insertable<PaquetesTable>;

/**
 * Inserts the packages in one statement; a wr the company already has is left alone (the
 * unique index decides, so concurrent imports of one wr create it once). Returns wr → id of
 * the rows this statement created.
 */
export async function insertNewPaquetes(db: Db, rows: readonly NewPaquete[]): Promise<Map<string, number>> {
  if (rows.length === 0) return new Map();
  const created = await db
    .insertInto('paquetes')
    .values([...rows])
    .onConflict((oc) => oc.columns(['empresa_id', 'wr']).doNothing())
    .returning(['id', 'wr'])
    .execute();
  return new Map(created.map((r) => [r.wr, r.id]));
}

/** wr → id of the company's packages with these wr, in one query. */
export async function findPaqueteIdsByWr(db: Db, empresaId: number, wrs: readonly string[]): Promise<Map<string, number>> {
  if (wrs.length === 0) return new Map();
  const rows = await db
    .selectFrom('paquetes')
    .select(['id', 'wr'])
    .where('empresa_id', '=', empresaId)
    .where('wr', 'in', [...wrs])
    .execute();
  return new Map(rows.map((r) => [r.wr, r.id]));
}
