import type { Insertable, Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { PageRequest } from '@erp/contracts';
import type { SuscripcionRow } from '../domain/suscripcion-row';
import type { SubscriptionsDb, SuscripcionesTable } from './tables';

type Db = Kysely<SubscriptionsDb> | Transaction<SubscriptionsDb>;

/** Serialises the subscriptions a company creates, so its limit holds under concurrent requests. */
export async function lockEmpresaSuscripciones(trx: Transaction<SubscriptionsDb>, empresaId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('subscriptions.suscripciones'), ${empresaId})`.execute(trx);
}

export async function countSuscripciones(db: Db, empresaId: number): Promise<number> {
  const row = await db
    .selectFrom('suscripciones')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('empresa_id', '=', empresaId)
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function insertSuscripcion(trx: Transaction<SubscriptionsDb>, row: Insertable<SuscripcionesTable>): Promise<SuscripcionRow> {
  return trx.insertInto('suscripciones').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findSuscripcion(db: Db, empresaId: number, id: number): Promise<SuscripcionRow | undefined> {
  return db.selectFrom('suscripciones').selectAll().where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

export async function listSuscripciones(db: Db, empresaId: number, page: PageRequest): Promise<{ total: number; items: SuscripcionRow[] }> {
  const [total, items] = await Promise.all([
    countSuscripciones(db, empresaId),
    db
      .selectFrom('suscripciones')
      .selectAll()
      .where('empresa_id', '=', empresaId)
      .orderBy('id')
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page)
      .execute(),
  ]);
  return { total, items };
}

/** Deletes it with what it is still owed (cascade), so the dispatcher finds nothing more to send. */
export async function deleteSuscripcion(db: Db, empresaId: number, id: number): Promise<SuscripcionRow | undefined> {
  return db.deleteFrom('suscripciones').where('empresa_id', '=', empresaId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function disableSuscripcion(db: Db, id: number, motivo: string): Promise<void> {
  await db
    .updateTable('suscripciones')
    .set({ enable: false, motivo_deshabilitada: motivo, updated_at: new Date() })
    .where('id', '=', id)
    .where('enable', '=', true)
    .execute();
}

/** Subscriptions of every company by state, for metrics: `disabled` ones stopped after their retry window. */
export async function countSuscripcionesByEstado(db: Db): Promise<{ enabled: number; disabled: number }> {
  const row = await db
    .selectFrom('suscripciones')
    .select([
      sql<number>`count(*) filter (where enable)::int`.as('enabled'),
      sql<number>`count(*) filter (where not enable)::int`.as('disabled'),
    ])
    .executeTakeFirstOrThrow();
  return row;
}

export interface SuscripcionChanges {
  url?: string;
  eventos?: string[];
  descripcion?: string | null;
  enable?: boolean;
}

/**
 * Applies a partner's changes. Enabling (also one the retry window disabled) clears the reason and
 * the endpoint's pause, and makes everything it is still owed due now with a fresh retry window;
 * disabling by the partner says so in `motivo_deshabilitada`.
 */
export async function updateSuscripcion(
  trx: Transaction<SubscriptionsDb>,
  empresaId: number,
  id: number,
  changes: SuscripcionChanges,
): Promise<SuscripcionRow | undefined> {
  const row = await trx
    .updateTable('suscripciones')
    .set({
      ...(changes.url !== undefined ? { url: changes.url } : {}),
      ...(changes.eventos !== undefined ? { eventos: changes.eventos } : {}),
      ...(changes.descripcion !== undefined ? { descripcion: changes.descripcion } : {}),
      ...(changes.enable === true ? { enable: true, motivo_deshabilitada: null, fallos_seguidos: 0, pausada_hasta: null } : {}),
      ...(changes.enable === false ? { enable: false, motivo_deshabilitada: 'Deshabilitada por la empresa' } : {}),
      updated_at: new Date(),
    })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (row && changes.enable === true)
    await trx
      .updateTable('entregas')
      .set({ proximo_intento_at: new Date(), primer_fallo_at: null })
      .where('suscripcion_id', '=', id)
      .where('estado', '=', 'pendiente')
      .execute();
  return row;
}

/** Replaces the secret; the previous one keeps signing deliveries (beside the new one) for `overlapHours`. */
export async function rotateSecreto(db: Db, empresaId: number, id: number, secreto: string, overlapHours: number) {
  return db
    .updateTable('suscripciones')
    .set({
      secreto_anterior: sql<string>`secreto`,
      secreto_anterior_hasta: sql<Date>`now() + make_interval(hours => ${overlapHours}::int)`,
      secreto,
      updated_at: new Date(),
    })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .returning(['secreto', 'secreto_anterior_hasta'])
    .executeTakeFirst();
}
