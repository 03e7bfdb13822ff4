import { sql, type Kysely } from 'kysely';
import type { GatewayDb, IdempotenciaTable } from './tables';

/** How long a key is kept (the IETF draft's and Stripe's 24 hours). */
export const IDEMPOTENCIA_TTL_HOURS = 24;
/**
 * A request still marked running after this long was abandoned (its gateway died): the same
 * request may take it over. Far above what a request may take (a batch of 100 runs in slices of a
 * few seconds each).
 */
export const IDEMPOTENCIA_ABANDONED_AFTER_SECONDS = 120;

export interface IdempotenciaKey {
  empresa_id: number;
  clave: string;
  huella: string;
}

/** What a request found under its key. */
export type IdempotenciaClaim =
  | { kind: 'claimed' }
  | { kind: 'other-request' }
  | { kind: 'running' }
  | { kind: 'answered'; status: number; cuerpo: Buffer; cabeceras: Record<string, string> };

/**
 * Takes the key for this request, in one statement: a new key, one expired (older than 24 hours)
 * or one abandoned by the same request is taken; otherwise the row found says what to answer.
 * Two requests racing for a new key are ordered by the primary key: one takes it, the other
 * finds it running.
 */
export async function claimIdempotencia(db: Kysely<GatewayDb>, key: IdempotenciaKey): Promise<IdempotenciaClaim> {
  const taken = await db
    .insertInto('idempotencia')
    .values({ ...key, created_at: sql`now()` })
    .onConflict((oc) =>
      oc
        .columns(['empresa_id', 'clave'])
        .doUpdateSet({ huella: key.huella, status: null, cuerpo: null, cabeceras: null, created_at: sql`now()` })
        .where((eb) =>
          eb.or([
            eb('idempotencia.created_at', '<', sql<Date>`now() - make_interval(hours => ${IDEMPOTENCIA_TTL_HOURS})`),
            eb.and([
              eb('idempotencia.status', 'is', null),
              eb('idempotencia.huella', '=', key.huella),
              eb('idempotencia.created_at', '<', sql<Date>`now() - make_interval(secs => ${IDEMPOTENCIA_ABANDONED_AFTER_SECONDS})`),
            ]),
          ]),
        ),
    )
    .returning('clave')
    .executeTakeFirst();
  if (taken) return { kind: 'claimed' };
  const row = await db
    .selectFrom('idempotencia')
    .select(['huella', 'status', 'cuerpo', 'cabeceras'])
    .where('empresa_id', '=', key.empresa_id)
    .where('clave', '=', key.clave)
    .executeTakeFirst();
  // Purged between the two statements: nothing holds the key any more.
  if (!row) return claimIdempotencia(db, key);
  if (row.huella !== key.huella) return { kind: 'other-request' };
  if (row.status === null) return { kind: 'running' };
  return { kind: 'answered', status: row.status, cuerpo: row.cuerpo!, cabeceras: row.cabeceras ?? {} };
}

/** Keeps the answer of the request that holds the key. */
export async function answerIdempotencia(
  db: Kysely<GatewayDb>,
  key: IdempotenciaKey,
  answer: Pick<IdempotenciaTable, 'status' | 'cuerpo' | 'cabeceras'>,
): Promise<void> {
  await db
    .updateTable('idempotencia')
    .set(answer)
    .where('empresa_id', '=', key.empresa_id)
    .where('clave', '=', key.clave)
    .where('huella', '=', key.huella)
    .where('status', 'is', null)
    .execute();
}

/** Frees the key of a request that got no answer worth repeating (a 5xx): the next attempt runs. */
export async function releaseIdempotencia(db: Kysely<GatewayDb>, key: IdempotenciaKey): Promise<void> {
  await db
    .deleteFrom('idempotencia')
    .where('empresa_id', '=', key.empresa_id)
    .where('clave', '=', key.clave)
    .where('huella', '=', key.huella)
    .where('status', 'is', null)
    .execute();
}

/** Deletes up to `limit` keys older than 24 hours; answers how many. */
export async function purgeIdempotencia(db: Kysely<GatewayDb>, limit: number): Promise<number> {
  const expired = sql<Date>`now() - make_interval(hours => ${IDEMPOTENCIA_TTL_HOURS})`;
  const result = await db
    .deleteFrom('idempotencia')
    .where((eb) =>
      eb(
        eb.refTuple('empresa_id', 'clave'),
        'in',
        eb
          .selectFrom('idempotencia')
          .select(['empresa_id', 'clave'])
          .where('created_at', '<', expired)
          .limit(limit)
          .$asTuple('empresa_id', 'clave'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
