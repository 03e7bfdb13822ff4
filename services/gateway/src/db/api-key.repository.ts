import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { Scope } from '@erp/contracts';
import { GATEWAY_SCHEMA, type GatewayDb } from './tables';

type Db = Kysely<GatewayDb> | Transaction<GatewayDb>;

export interface NewApiKey {
  empresa_id: number;
  usuario_id: number | null;
  key_hash: Buffer;
  prefix: string;
  activo: boolean;
  nombre?: string | null;
  /** Every scope when omitted (a key made by the back office or the seed). */
  alcances?: Scope[];
  expira_el?: Date | null;
}

export async function insertApiKey(db: Db, key: NewApiKey): Promise<number> {
  const { id } = await insertApiKeyReturning(db, key);
  return id;
}

/** Inserts a key and answers it as listings show it. */
export async function insertApiKeyReturning(db: Db, key: NewApiKey) {
  return db
    .insertInto('api_keys')
    .values({ ...key, revoked_at: null })
    .returning(['id', 'nombre', 'prefix', 'alcances', 'created_at', 'expira_el', 'ultimo_uso', 'ultima_direccion'])
    .executeTakeFirstOrThrow();
}

/** Deactivates the key, keeping the first revocation time; undefined when there is no such key. */
export async function revokeApiKey(db: Db, id: number) {
  return db
    .updateTable('api_keys')
    .set({ activo: false, revoked_at: sql<Date>`coalesce(revoked_at, now())` })
    .where('id', '=', id)
    .returning(['id', 'empresa_id', 'nombre', 'prefix', 'alcances', 'expira_el'])
    .executeTakeFirst();
}

export interface ApiKeyUsage {
  id: number;
  ultimo_uso: Date;
  ultima_direccion: string;
}

/** Records the last use of many keys in one statement; an older hour never overwrites a newer one. */
export async function recordApiKeyUsage(db: Db, usages: readonly ApiKeyUsage[]): Promise<void> {
  if (usages.length === 0) return;
  await sql`
    update ${sql.table(`${GATEWAY_SCHEMA}.api_keys`)} k
       set ultimo_uso = u.ultimo_uso, ultima_direccion = u.ultima_direccion
      from (select * from unnest(${usages.map((u) => u.id)}::int[], ${usages.map((u) => u.ultimo_uso.toISOString())}::timestamptz[],
                                 ${usages.map((u) => u.ultima_direccion)}::text[]) as t(id, ultimo_uso, ultima_direccion)) u
     where k.id = u.id and (k.ultimo_uso is null or k.ultimo_uso <= u.ultimo_uso)`.execute(db);
}

/** A key that has not reached its `expira_el` (or has none). */
const notExpired = (eb: ExpressionBuilder<GatewayDb, 'api_keys'>) =>
  eb.or([eb('expira_el', 'is', null), eb('expira_el', '>', sql<Date>`now()`)]);

/** A key of the company as the API lists it; `live`: not revoked and not expired. */
export async function listApiKeys(db: Db, empresaId: number) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'nombre', 'prefix', 'alcances', 'created_at', 'expira_el', 'ultimo_uso', 'ultima_direccion'])
    .where('empresa_id', '=', empresaId)
    .where('activo', '=', true)
    .where(notExpired)
    .orderBy('id')
    .execute();
}

export type ApiKeyRow = Awaited<ReturnType<typeof listApiKeys>>[number];

/** A live key of the company, locked for a change (rotation, revocation); undefined when there is none. */
export async function lockLiveApiKey(trx: Transaction<GatewayDb>, empresaId: number, id: number) {
  return trx
    .selectFrom('api_keys')
    .select(['id', 'nombre', 'prefix', 'alcances', 'created_at', 'expira_el', 'usuario_id', 'rotada_a'])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .where('activo', '=', true)
    .where(notExpired)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Locks the company's live keys (so two revocations cannot both pass the last-key check) and
 * answers their ids and scopes.
 */
export async function lockLiveApiKeys(trx: Transaction<GatewayDb>, empresaId: number) {
  return trx
    .selectFrom('api_keys')
    .select(['id', 'alcances', 'expira_el'])
    .where('empresa_id', '=', empresaId)
    .where('activo', '=', true)
    .where(notExpired)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Ends a rotated key's life at the end of its grace (never later than it already ended), naming its successor. */
export async function retireApiKey(trx: Transaction<GatewayDb>, id: number, until: Date, successor: number): Promise<Date> {
  const row = await trx
    .updateTable('api_keys')
    .set({ expira_el: sql<Date>`least(coalesce(expira_el, ${until}), ${until})`, rotada_a: successor })
    .where('id', '=', id)
    .returning('expira_el')
    .executeTakeFirstOrThrow();
  return row.expira_el!;
}

/** Revokes a key of the company at once; undefined when it has no such live key. */
export async function revokeEmpresaApiKey(trx: Transaction<GatewayDb>, empresaId: number, id: number) {
  return trx
    .updateTable('api_keys')
    .set({ activo: false, revoked_at: sql<Date>`coalesce(revoked_at, now())` })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .where('activo', '=', true)
    .returning(['id', 'nombre', 'prefix', 'alcances', 'expira_el'])
    .executeTakeFirst();
}

/**
 * Marks the live keys that expire within `withinMs` and were not announced yet (a rotated key's
 * end of grace was announced by its rotation), and answers them: each is announced once.
 */
export async function claimExpiringApiKeys(trx: Transaction<GatewayDb>, withinMs: number) {
  return trx
    .updateTable('api_keys')
    .set({ aviso_vencimiento: sql<Date>`now()` })
    .where('activo', '=', true)
    .where('rotada_a', 'is', null)
    .where('aviso_vencimiento', 'is', null)
    .where('expira_el', '>', sql<Date>`now()`)
    .where('expira_el', '<=', sql<Date>`now() + ${withinMs} * interval '1 millisecond'`)
    .returning(['id', 'empresa_id', 'nombre', 'prefix', 'alcances', 'expira_el'])
    .execute();
}
