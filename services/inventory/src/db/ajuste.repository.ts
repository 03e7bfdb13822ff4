import type { Transaction } from 'kysely';
import type { CausaStock } from '@erp/contracts';
import type { AjusteMovimiento, InventoryDb } from './tables';

export async function findAjuste(trx: Transaction<InventoryDb>, empresaId: number, clave: string) {
  return trx
    .selectFrom('ajustes')
    .select(['id', 'clave', 'movimientos'])
    .where('empresa_id', '=', empresaId)
    .where('clave', '=', clave)
    .executeTakeFirst();
}

/** Records an adjustment's key unless it exists; undefined when it does (a concurrent duplicate waits for the first). */
export async function insertAjuste(
  trx: Transaction<InventoryDb>,
  row: { empresaId: number; clave: string; origen: string; causa: CausaStock; concepto: string | null },
) {
  return trx
    .insertInto('ajustes')
    .values({
      empresa_id: row.empresaId,
      clave: row.clave,
      origen: row.origen,
      causa: JSON.stringify(row.causa),
      concepto: row.concepto,
      movimientos: '[]',
    })
    .onConflict((oc) => oc.columns(['empresa_id', 'clave']).doNothing())
    .returning('id')
    .executeTakeFirst();
}

/** The adjustment under `clave`, its row locked; undefined when there is none. */
export async function lockAjuste(trx: Transaction<InventoryDb>, empresaId: number, clave: string) {
  return trx
    .selectFrom('ajustes')
    .select(['id', 'origen', 'causa', 'movimientos', 'revertido_at'])
    .where('empresa_id', '=', empresaId)
    .where('clave', '=', clave)
    .forUpdate()
    .executeTakeFirst();
}

/** Marks an adjustment reverted: its key answers no movement from now on. */
export async function markAjusteRevertido(trx: Transaction<InventoryDb>, id: string): Promise<void> {
  await trx.updateTable('ajustes').set({ movimientos: '[]', revertido_at: new Date() }).where('id', '=', id).execute();
}

export async function recordAjusteMovimientos(trx: Transaction<InventoryDb>, id: string, movimientos: AjusteMovimiento[]): Promise<void> {
  await trx
    .updateTable('ajustes')
    .set({ movimientos: JSON.stringify(movimientos) })
    .where('id', '=', id)
    .execute();
}
