import { sql, type Kysely, type Transaction } from 'kysely';
import type { DocumentoRow } from '../domain/sale-rules';
import type { SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

const DOCUMENTO_COLUMNS = ['id', 'sucursal_id', 'nombre', 'prefijo', 'correlativo', 'activo', 'solo_cotizacion'] as const;

export async function findDocumento(db: Db, empresaId: number, id: number): Promise<DocumentoRow | undefined> {
  return db.selectFrom('documentos').select(DOCUMENTO_COLUMNS).where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

/**
 * Takes the document type's next number in one statement: the row stays locked until the
 * transaction ends, so sales of one document type are numbered one after another, and a sale
 * rolled back (refused after this point included) leaves its number to the next. Answers the
 * row with the number taken as `correlativo`.
 */
export async function takeCorrelativo(trx: Transaction<SalesDb>, empresaId: number, id: number): Promise<DocumentoRow | undefined> {
  return trx
    .updateTable('documentos')
    .set({ correlativo: sql<number>`correlativo + 1`, updated_at: new Date() })
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .returning(['id', 'sucursal_id', 'nombre', 'prefijo', sql<number>`correlativo - 1`.as('correlativo'), 'activo', 'solo_cotizacion'])
    .executeTakeFirst();
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
