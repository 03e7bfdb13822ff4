import { sql, type Kysely, type Transaction } from 'kysely';
import type { DocumentoRow } from '../domain/sale-rules';
import type { SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

const DOCUMENTO_COLUMNS = ['id', 'sucursal_id', 'nombre', 'prefijo', 'correlativo', 'activo', 'solo_cotizacion'] as const;

export async function findDocumento(db: Db, empresaId: number, id: number): Promise<DocumentoRow | undefined> {
  return db.selectFrom('documentos').select(DOCUMENTO_COLUMNS).where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

/**
 * Locks the document type's row for the rest of the transaction: sales of one document type
 * take their numbers one after another, and a rolled-back sale leaves its number to the next.
 */
export async function lockDocumento(trx: Transaction<SalesDb>, empresaId: number, id: number): Promise<DocumentoRow | undefined> {
  return trx.selectFrom('documentos').select(DOCUMENTO_COLUMNS).where('empresa_id', '=', empresaId).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Consumes the number just read under the lock. */
export async function advanceCorrelativo(trx: Transaction<SalesDb>, id: number, numero: number): Promise<void> {
  await trx.updateTable('documentos').set({ correlativo: numero + 1, updated_at: new Date() }).where('id', '=', id).execute();
}

export async function findCanal(db: Db, empresaId: number, id: number) {
  return db.selectFrom('canales').select(['id', 'nombre', 'activo']).where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

export async function findCliente(db: Db, empresaId: number, id: number, options: { lock?: boolean } = {}) {
  const q = db.selectFrom('clientes').select(['id', 'nombre', 'limite_credito', 'activo']).where('empresa_id', '=', empresaId).where('id', '=', id);
  return options.lock ? q.forUpdate().executeTakeFirst() : q.executeTakeFirst();
}

/** What the customer owes on its pending sales (but `exceptVentaId`, the sale being updated). */
export async function pendingBalance(db: Db, empresaId: number, clienteId: number, exceptVentaId?: number): Promise<string> {
  let q = db
    .selectFrom('ventas')
    // Returns credited: what active returns took off a pending sale is no longer owed.
    .select(sql<string>`coalesce(sum(greatest(saldo - monto_devuelto, 0)), 0)`.as('adeudado'))
    .where('empresa_id', '=', empresaId)
    .where('cliente_id', '=', clienteId)
    .where('estado', '=', 'Pendiente');
  if (exceptVentaId !== undefined) q = q.where('id', '!=', exceptVentaId);
  const row = await q.executeTakeFirstOrThrow();
  return String(row.adeudado);
}
