import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { DocumentoRow } from '../domain/sale-rules';
import type { CanalesTable, ClientesTable, DocumentosTable, SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

const DOCUMENTO_COLUMNS = ['id', 'sucursal_id', 'nombre', 'prefijo', 'correlativo', 'activo', 'solo_cotizacion'] as const;

export async function findDocumento(db: Db, empresaId: number, id: number): Promise<DocumentoRow | undefined> {
  return db.selectFrom('documentos').select(DOCUMENTO_COLUMNS).where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

export async function findCanal(db: Db, empresaId: number, id: number) {
  return db.selectFrom('canales').select(['id', 'nombre', 'activo']).where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

/**
 * With `lock`, credit checks of the customer happen one after another. The lock does not conflict
 * with the key-share lock a sale's foreign key takes, so a sale that does not check the credit
 * never waits for it (nor, holding its document type, makes a credit check wait in a cycle).
 */
export async function findCliente(db: Db, empresaId: number, id: number, options: { lock?: boolean } = {}) {
  const q = db.selectFrom('clientes').select(['id', 'nombre', 'limite_credito', 'activo']).where('empresa_id', '=', empresaId).where('id', '=', id);
  return options.lock ? q.forNoKeyUpdate().executeTakeFirst() : q.executeTakeFirst();
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

/**
 * The company's customer with this email (active first, then the oldest), created when there is
 * none. Serialised per company and email, so two orders of a new customer create one.
 */
export async function findOrCreateClienteByEmail(trx: Transaction<SalesDb>, empresaId: number, email: string, nombre: string | null | undefined): Promise<{ id: number; creado: boolean }> {
  await sql`select pg_advisory_xact_lock(hashtext('cliente-email'), hashtext(${`${empresaId}:${email}`}))`.execute(trx);
  const existing = await trx
    .selectFrom('clientes')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where(sql`lower(email)`, '=', email)
    .orderBy('activo', 'desc')
    .orderBy('id')
    .executeTakeFirst();
  if (existing) return { id: existing.id, creado: false };
  const { id } = await trx.insertInto('clientes').values({ empresa_id: empresaId, nombre: nombre ?? email, email }).returning('id').executeTakeFirstOrThrow();
  return { id, creado: true };
}

export async function insertDocumento(trx: Transaction<SalesDb>, row: Insertable<DocumentosTable>): Promise<number> {
  const { id } = await trx.insertInto('documentos').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function insertCanal(trx: Transaction<SalesDb>, row: Insertable<CanalesTable>): Promise<number> {
  const { id } = await trx.insertInto('canales').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function insertCliente(trx: Transaction<SalesDb>, row: Insertable<ClientesTable>): Promise<number> {
  const { id } = await trx.insertInto('clientes').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}
