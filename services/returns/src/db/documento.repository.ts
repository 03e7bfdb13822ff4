import type { Transaction } from 'kysely';
import type { ReturnsDb } from './tables';

/**
 * The company's series of that name and prefix, created on first use (numbering from
 * `correlativo`, 1 by default) and locked for the rest of the transaction: returns of one
 * series take their numbers one after another, and a rolled-back return leaves its number to
 * the next.
 */
export async function lockSeries(
  trx: Transaction<ReturnsDb>,
  empresaId: number,
  series: { nombre: string; prefijo: string; correlativo?: number | undefined },
) {
  const { nombre, prefijo } = series;
  await trx
    .insertInto('documentos')
    .values({ empresa_id: empresaId, nombre, prefijo, ...(series.correlativo !== undefined ? { correlativo: series.correlativo } : {}) })
    .onConflict((oc) => oc.columns(['empresa_id', 'nombre', 'prefijo']).doNothing())
    .execute();
  return trx
    .selectFrom('documentos')
    .select(['id', 'nombre', 'prefijo', 'correlativo'])
    .where('empresa_id', '=', empresaId)
    .where('nombre', '=', nombre)
    .where('prefijo', '=', prefijo)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/** Consumes the number just read under the lock. */
export async function advanceSeries(trx: Transaction<ReturnsDb>, id: number, numero: number): Promise<void> {
  await trx
    .updateTable('documentos')
    .set({ correlativo: numero + 1, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}
