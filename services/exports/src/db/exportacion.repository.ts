import { sql, type Kysely, type Transaction } from 'kysely';
import type { RecursoExportacion, TenantContext } from '@erp/contracts';
import { inTransaction, millisecondsFromNow } from '@erp/db';
import type { ExportacionRow } from '../domain/exportacion';
import type { ExportsDb } from './tables';

type Db = Kysely<ExportsDb> | Transaction<ExportsDb>;

const COLUMNS = [
  'id',
  'empresa_id',
  'recurso',
  'filtros',
  'estado',
  'intento',
  'lease_hasta',
  'objeto',
  'objetos',
  'bytes',
  'cursor',
  'error',
  'created_at',
  'iniciada',
  'completada',
  'expira',
] as const;

/** An export claimed by the worker for an attempt: the row and the context its owner is asked under. */
export type ClaimedExportacion = ExportacionRow & { contexto: TenantContext };

/** Serialises the exports created by one company for the rest of the transaction (the running-exports limit). */
export async function lockEmpresaExportaciones(trx: Transaction<ExportsDb>, empresaId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`exportaciones:${empresaId}`}, 0))`.execute(trx);
}

export async function countEnCurso(db: Db, empresaId: number): Promise<number> {
  const row = await db
    .selectFrom('exportaciones')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('empresa_id', '=', empresaId)
    .where('estado', 'in', ['en_cola', 'procesando'])
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function insertExportacion(
  trx: Transaction<ExportsDb>,
  exportacion: { empresaId: number; recurso: RecursoExportacion; filtros: Record<string, unknown>; contexto: TenantContext },
): Promise<ExportacionRow> {
  return trx
    .insertInto('exportaciones')
    .values({
      empresa_id: exportacion.empresaId,
      recurso: exportacion.recurso,
      filtros: JSON.stringify(exportacion.filtros),
      contexto: JSON.stringify(exportacion.contexto),
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function findExportacion(db: Db, empresaId: number, id: number): Promise<ExportacionRow | undefined> {
  return db.selectFrom('exportaciones').select(COLUMNS).where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

/** One page of the company's exports, newest first, and their total. */
export async function listExportaciones(db: Db, empresaId: number, page: { page: number; per_page: number }) {
  const [count, rows] = await Promise.all([
    db
      .selectFrom('exportaciones')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('empresa_id', '=', empresaId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('exportaciones')
      .select(COLUMNS)
      .where('empresa_id', '=', empresaId)
      .orderBy('id', 'desc')
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page)
      .execute(),
  ]);
  return { total: count.n, rows };
}

export async function lockExportacion(trx: Transaction<ExportsDb>, empresaId: number, id: number): Promise<ExportacionRow | undefined> {
  return trx
    .selectFrom('exportaciones')
    .select(COLUMNS)
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * DELETE: a running export becomes `cancelada` (its worker's lease is void, so whatever it writes
 * is never pointed to); a finished one loses its file at once.
 */
export async function cancelExportacion(trx: Transaction<ExportsDb>, row: ExportacionRow): Promise<ExportacionRow> {
  const running = row.estado === 'en_cola' || row.estado === 'procesando';
  return trx
    .updateTable('exportaciones')
    .set(running ? { estado: 'cancelada', lease_hasta: null } : { objeto: null, expira: sql<Date>`least(expira, now())` })
    .where('id', '=', row.id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Takes the oldest queued job, or one whose worker stopped renewing its lease, for a new attempt.
 * `skip locked`: replicas claiming at once each get another job.
 */
export async function claimExportacion(db: Db, leaseMs: number): Promise<ClaimedExportacion | undefined> {
  return db
    .updateTable('exportaciones')
    .set({
      estado: 'procesando',
      intento: sql<number>`intento + 1`,
      lease_hasta: millisecondsFromNow(leaseMs),
      iniciada: sql<Date>`coalesce(iniciada, now())`,
    })
    .where(
      'id',
      '=',
      db
        .selectFrom('exportaciones')
        .select('id')
        .where((eb) =>
          eb.or([
            eb.and([eb('estado', '=', 'en_cola'), eb.or([eb('reintentar_at', 'is', null), eb('reintentar_at', '<=', sql<Date>`now()`)])]),
            eb.and([eb('estado', '=', 'procesando'), eb('lease_hasta', '<', sql<Date>`now()`)]),
          ]),
        )
        .orderBy('id')
        .limit(1)
        .forUpdate()
        .skipLocked(),
    )
    .returning([...COLUMNS, 'contexto'])
    .executeTakeFirst();
}

/** Renews the attempt's lease; false when the attempt no longer holds the job (cancelled, or taken over). */
export async function renewLease(db: Db, id: number, intento: number, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable('exportaciones')
    .set({ lease_hasta: millisecondsFromNow(leaseMs) })
    .where('id', '=', id)
    .where('intento', '=', intento)
    .where('estado', '=', 'procesando')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends the attempt's lease now (its process stops), so another replica takes the job over at once; a no-op once the attempt no longer holds it. */
export async function giveBackLease(db: Db, id: number, intento: number): Promise<void> {
  await db
    .updateTable('exportaciones')
    .set({ lease_hasta: sql<Date>`now()` })
    .where('id', '=', id)
    .where('intento', '=', intento)
    .where('estado', '=', 'procesando')
    .execute();
}

/** Points the job to the attempt's finished file, if the attempt still holds it; undefined otherwise. */
export async function completeExportacion(
  trx: Transaction<ExportsDb>,
  exportacion: { id: number; intento: number },
  archivo: { objeto: string; objetos: number; bytes: number; cursor: string },
  ttlMs: number,
): Promise<ExportacionRow | undefined> {
  return trx
    .updateTable('exportaciones')
    .set({
      estado: 'completada',
      objeto: archivo.objeto,
      objetos: archivo.objetos,
      bytes: archivo.bytes,
      cursor: archivo.cursor,
      error: null,
      lease_hasta: null,
      completada: sql<Date>`now()`,
      expira: millisecondsFromNow(ttlMs),
    })
    .where('id', '=', exportacion.id)
    .where('intento', '=', exportacion.intento)
    .where('estado', '=', 'procesando')
    .returning(COLUMNS)
    .executeTakeFirst();
}

/**
 * An attempt that failed: queued again while attempts remain, `fallida` with the reason after the
 * last. Undefined when the attempt no longer held the job.
 */
export async function failIntento(
  trx: Transaction<ExportsDb>,
  exportacion: { id: number; intento: number },
  error: string,
  retry: { maxAttempts: number; backoffMs: number },
): Promise<ExportacionRow | undefined> {
  const last = exportacion.intento >= retry.maxAttempts;
  // The pause before the next attempt doubles with each one that failed.
  const pause = millisecondsFromNow(retry.backoffMs * 2 ** (exportacion.intento - 1));
  return trx
    .updateTable('exportaciones')
    .set(last ? { estado: 'fallida', error, lease_hasta: null } : { estado: 'en_cola', error, lease_hasta: null, reintentar_at: pause })
    .where('id', '=', exportacion.id)
    .where('intento', '=', exportacion.intento)
    .where('estado', '=', 'procesando')
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Finished exports whose file has outlived `expira`. */
export async function expiredObjetos(db: Db, limit: number): Promise<Array<{ id: number; recurso: RecursoExportacion; objeto: string }>> {
  const rows = await db
    .selectFrom('exportaciones')
    .select(['id', 'recurso', 'objeto'])
    .where('objeto', 'is not', null)
    .where('expira', '<=', sql<Date>`now()`)
    .orderBy('expira')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, recurso: r.recurso, objeto: r.objeto! }));
}

/**
 * Records the file an attempt is about to have written, before its owner is asked to write it:
 * whatever then happens to the worker, the file is found by `strayArchivos`.
 */
export async function recordArchivo(db: Db, exportacion: { id: number; intento: number }, objeto: string): Promise<void> {
  await db
    .insertInto('archivos')
    .values({ objeto, exportacion_id: exportacion.id, intento: exportacion.intento })
    .onConflict((oc) => oc.column('objeto').doNothing())
    .execute();
}

/**
 * The recorded files that no job points to and no running attempt will complete (of one job, or
 * of all), oldest first; `vencido` when recorded longer ago than `maxAgeMs` (0: never), the
 * store's own limit for any file.
 */
export async function strayArchivos(
  db: Db,
  maxAgeMs: number,
  exportacionId?: number,
): Promise<Array<{ recurso: RecursoExportacion; objeto: string; vencido: boolean }>> {
  let query = db
    .selectFrom('archivos as a')
    .innerJoin('exportaciones as e', 'e.id', 'a.exportacion_id')
    .select([
      'e.recurso',
      'a.objeto',
      (maxAgeMs > 0 ? sql<boolean>`a.created_at < now() - ${maxAgeMs} * interval '1 millisecond'` : sql<boolean>`false`).as('vencido'),
    ])
    .where((eb) =>
      eb.and([
        eb('e.objeto', 'is distinct from', eb.ref('a.objeto')),
        eb.not(eb.and([eb('e.estado', '=', 'procesando'), eb('e.intento', '=', eb.ref('a.intento'))])),
      ]),
    );
  if (exportacionId !== undefined) query = query.where('a.exportacion_id', '=', exportacionId);
  return query.orderBy('a.created_at').orderBy('a.objeto').execute();
}

/** Forgets a recorded file once it is removed from the store (or can no longer be there). */
export async function forgetArchivo(db: Db, objeto: string): Promise<void> {
  await db.deleteFrom('archivos').where('objeto', '=', objeto).execute();
}

/** Forgets an expired file once removed from the store: the job no longer points to it, and its record goes. */
export async function forgetObjeto(db: Kysely<ExportsDb>, id: number, objeto: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    await trx.updateTable('exportaciones').set({ objeto: null }).where('id', '=', id).where('objeto', '=', objeto).execute();
    await forgetArchivo(trx, objeto);
  });
}
