import type { Transaction } from 'kysely';
import type { ReturnsDb } from './tables';

/**
 * The company's document of that name and prefix (its numbering series), created on first use
 * (numbering from `correlativo`, 1 by default) and locked for the rest of the transaction: returns
 * of one document take their numbers one after another, and a rolled-back return leaves its
 * number to the next.
 */
export async function lockDocumento(
  trx: Transaction<ReturnsDb>,
  empresaId: number,
  documento: { nombre: string; prefijo: string; correlativo?: number | undefined },
) {
  const { nombre, prefijo } = documento;
  await trx
    .insertInto('documentos')
    .values({
      empresa_id: empresaId,
      nombre,
      prefijo,
      ...(documento.correlativo !== undefined ? { correlativo: documento.correlativo } : {}),
    })
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
export async function advanceCorrelativo(trx: Transaction<ReturnsDb>, id: number, numero: number): Promise<void> {
  await trx
    .updateTable('documentos')
    .set({ correlativo: numero + 1, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}
