import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { EmpresasTable, GatewayDb } from './tables';

type Db = Kysely<GatewayDb> | Transaction<GatewayDb>;

/** The company a seed created under this key, with the refs it recorded. */
export async function findEmpresaByClave(db: Db, clave: string): Promise<{ id: number; seed_refs: unknown } | undefined> {
  return db.selectFrom('empresas').select(['id', 'seed_refs']).where('clave', '=', clave).executeTakeFirst();
}

export async function insertEmpresa(db: Db, empresa: Insertable<EmpresasTable>): Promise<number> {
  const { id } = await db.insertInto('empresas').values(empresa).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function empresaExists(db: Db, empresaId: number): Promise<boolean> {
  return (await db.selectFrom('empresas').select('id').where('id', '=', empresaId).executeTakeFirst()) !== undefined;
}

/** False when there is no such company. */
export async function setEmpresaSeedRefs(db: Db, empresaId: number, refs: unknown): Promise<boolean> {
  const updated = await db
    .updateTable('empresas')
    .set({ seed_refs: JSON.stringify(refs), updated_at: sql<Date>`now()` })
    .where('id', '=', empresaId)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** False when there is no such company. */
export async function setEmpresaActive(db: Db, empresaId: number, activo: boolean): Promise<boolean> {
  const updated = await db
    .updateTable('empresas')
    .set({ activo, updated_at: sql<Date>`now()` })
    .where('id', '=', empresaId)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** Every company with its count of active API keys, by id. */
export async function listEmpresas(db: Db) {
  const rows = await db
    .selectFrom('empresas as e')
    .select((eb) => [
      'e.id',
      'e.clave',
      'e.nombre',
      'e.activo',
      eb
        .selectFrom('api_keys as k')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('k.empresa_id', '=', 'e.id')
        .where('k.activo', '=', true)
        .as('api_keys_activas'),
    ])
    .orderBy('e.id')
    .execute();
  return rows.map((r) => ({ ...r, api_keys_activas: r.api_keys_activas ?? 0 }));
}
