import { sql, type Kysely, type Transaction } from 'kysely';
import type { CausaStock, EstadoReserva } from '@erp/contracts';
import { millisecondsFromNow } from '@erp/db';
import type { InventoryDb, ReservaLinea } from './tables';

const RESERVA_COLUMNS = [
  'id',
  'clave',
  'origen',
  'causa',
  'bodega_id',
  'estado',
  'lineas',
  'revisiones',
  'created_at',
  'updated_at',
] as const;

export interface ReservaRow {
  id: string;
  clave: string;
  origen: string;
  causa: CausaStock;
  bodega_id: number | null;
  estado: EstadoReserva;
  lineas: ReservaLinea[];
  revisiones: number;
  created_at: Date;
  updated_at: Date;
}

export async function findReserva(
  trx: Transaction<InventoryDb>,
  empresaId: number,
  clave: string,
  options: { lock?: boolean } = {},
): Promise<ReservaRow | undefined> {
  const q = trx.selectFrom('reservas').select(RESERVA_COLUMNS).where('empresa_id', '=', empresaId).where('clave', '=', clave);
  return (options.lock ? q.forUpdate() : q).executeTakeFirst();
}

/** A reservation to record: the caller's names for its columns. */
export interface NuevaReserva {
  empresaId: number;
  clave: string;
  origen: string;
  causa: CausaStock;
  bodegaId: number | null;
  estado: EstadoReserva;
  lineas: ReservaLinea[];
  revisarEnMs: number;
}

const reservaValues = (row: NuevaReserva) => ({
  empresa_id: row.empresaId,
  clave: row.clave,
  origen: row.origen,
  causa: JSON.stringify(row.causa),
  bodega_id: row.bodegaId,
  estado: row.estado,
  lineas: JSON.stringify(row.lineas),
  revisar_en: millisecondsFromNow(row.revisarEnMs),
  confirmed_at: null,
  released_at: row.estado === 'liberada' ? sql<Date>`now()` : null,
});

/**
 * Records a reservation unless its key exists; undefined when it does (a concurrent duplicate
 * waits on the unique key until the first commits, then finds it).
 */
export async function insertReserva(trx: Transaction<InventoryDb>, row: NuevaReserva): Promise<ReservaRow | undefined> {
  return trx
    .insertInto('reservas')
    .values(reservaValues(row))
    .onConflict((oc) => oc.columns(['empresa_id', 'clave']).doNothing())
    .returning(RESERVA_COLUMNS)
    .executeTakeFirst();
}

/** The company's reservations among `claves`, by key. */
export async function findReservas(
  trx: Transaction<InventoryDb>,
  empresaId: number,
  claves: readonly string[],
): Promise<Map<string, ReservaRow>> {
  if (claves.length === 0) return new Map();
  const rows = await trx
    .selectFrom('reservas')
    .select(RESERVA_COLUMNS)
    .where('empresa_id', '=', empresaId)
    .where('clave', 'in', [...new Set(claves)])
    .execute();
  return new Map(rows.map((r) => [r.clave, r]));
}

/**
 * Records reservations in one statement, as `insertReserva` does each; answers those recorded,
 * by key (a key that exists is left out, as `insertReserva` answers undefined for it).
 */
export async function insertReservas(trx: Transaction<InventoryDb>, rows: readonly NuevaReserva[]): Promise<Map<string, ReservaRow>> {
  if (rows.length === 0) return new Map();
  const inserted = await trx
    .insertInto('reservas')
    .values(rows.map(reservaValues))
    .onConflict((oc) => oc.columns(['empresa_id', 'clave']).doNothing())
    .returning(RESERVA_COLUMNS)
    .execute();
  return new Map(inserted.map((r) => [r.clave, r]));
}

export async function setReservaEstado(trx: Transaction<InventoryDb>, id: string, estado: EstadoReserva): Promise<ReservaRow> {
  return trx
    .updateTable('reservas')
    .set({
      estado,
      updated_at: sql<Date>`now()`,
      ...(estado === 'confirmada' ? { confirmed_at: sql<Date>`now()` } : {}),
      ...(estado === 'liberada' ? { released_at: sql<Date>`now()` } : {}),
    })
    .where('id', '=', id)
    .returning(RESERVA_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Confirms the reservation of `clave` in one statement if it is still `reservada` (confirming it
 * moves no stock); false in any other state, or when the key is unknown.
 */
export async function confirmIfReservada(db: Kysely<InventoryDb>, empresaId: number, clave: string): Promise<boolean> {
  const row = await db
    .updateTable('reservas')
    .set({ estado: 'confirmada', updated_at: sql<Date>`now()`, confirmed_at: sql<Date>`now()` })
    .where('empresa_id', '=', empresaId)
    .where('clave', '=', clave)
    .where('estado', '=', 'reservada')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export interface DueReserva {
  id: string;
  empresa_id: number;
  clave: string;
  origen: string;
  revisiones: number;
}

/** Reservations still `reservada` whose check time has come, oldest first. */
export async function findDueReservas(db: Kysely<InventoryDb> | Transaction<InventoryDb>, limit: number): Promise<DueReserva[]> {
  return db
    .selectFrom('reservas')
    .select(['id', 'empresa_id', 'clave', 'origen', 'revisiones'])
    .where('estado', '=', 'reservada')
    .where('revisar_en', '<=', sql<Date>`now()`)
    .orderBy('revisar_en')
    .limit(limit)
    .execute();
}

/** Leaves a reservation for a later check (its origin could not answer). */
export async function postponeReserva(db: Kysely<InventoryDb>, id: string, delayMs: number): Promise<void> {
  await db
    .updateTable('reservas')
    .set({ revisar_en: millisecondsFromNow(delayMs), revisiones: sql<number>`revisiones + 1` })
    .where('id', '=', id)
    .where('estado', '=', 'reservada')
    .execute();
}

/** Reservations still open (neither confirmed nor released), and the age of the oldest (for metrics). */
export async function openReservas(db: Kysely<InventoryDb>): Promise<{ open: number; oldestAgeSeconds: number }> {
  const row = await db
    .selectFrom('reservas')
    .select([
      sql<number>`count(*)::int`.as('open'),
      sql<number>`coalesce(extract(epoch from now() - min(created_at)), 0)::float8`.as('oldest'),
    ])
    .where('estado', '=', 'reservada')
    .executeTakeFirstOrThrow();
  return { open: row.open, oldestAgeSeconds: row.oldest };
}
