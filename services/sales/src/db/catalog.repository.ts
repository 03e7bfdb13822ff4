import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { DocumentoRow } from '../domain/venta-rules';
import { salesTable, type CanalesTable, type ClientesTable, type DocumentosTable, type SalesDb } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

const DOCUMENTO_COLUMNS = ['id', 'sucursal_id', 'nombre', 'prefijo', 'correlativo', 'activo', 'solo_cotizacion'] as const;

export async function findDocumento(db: Db, empresaId: number, id: number): Promise<DocumentoRow | undefined> {
  return db.selectFrom('documentos').select(DOCUMENTO_COLUMNS).where('empresa_id', '=', empresaId).where('id', '=', id).executeTakeFirst();
}

type Canal = { id: number; nombre: string; activo: boolean };
type Cliente = { id: number; nombre: string; limite_credito: string; activo: boolean };

/**
 * The document type, channel and customer a sale names (a null id looks nothing up), in one
 * statement; each undefined when the company has no such row.
 */
export async function findVentaCatalog(
  db: Db,
  empresaId: number,
  ids: { documentoId: number; canalId: number | null; clienteId: number | null },
): Promise<{ documento: DocumentoRow | undefined; canal: Canal | undefined; cliente: Cliente | undefined }> {
  const { rows } = await sql<{
    d_id: number | null;
    d_sucursal_id: number;
    d_nombre: string;
    d_prefijo: string;
    d_correlativo: number;
    d_activo: boolean;
    d_solo_cotizacion: boolean;
    c_id: number | null;
    c_nombre: string;
    c_activo: boolean;
    k_id: number | null;
    k_nombre: string;
    k_limite_credito: string;
    k_activo: boolean;
  }>`
    select d.id as d_id, d.sucursal_id as d_sucursal_id, d.nombre as d_nombre, d.prefijo as d_prefijo, d.correlativo as d_correlativo, d.activo as d_activo, d.solo_cotizacion as d_solo_cotizacion,
           c.id as c_id, c.nombre as c_nombre, c.activo as c_activo,
           k.id as k_id, k.nombre as k_nombre, k.limite_credito as k_limite_credito, k.activo as k_activo
      from (select 1) as one
      left join ${salesTable('documentos')} d on d.empresa_id = ${empresaId} and d.id = ${ids.documentoId}
      left join ${salesTable('canales')} c on c.empresa_id = ${empresaId} and c.id = ${ids.canalId}
      left join ${salesTable('clientes')} k on k.empresa_id = ${empresaId} and k.id = ${ids.clienteId}`.execute(db);
  const r = rows[0]!;
  return {
    documento:
      r.d_id === null
        ? undefined
        : {
            id: r.d_id,
            sucursal_id: r.d_sucursal_id,
            nombre: r.d_nombre,
            prefijo: r.d_prefijo,
            correlativo: r.d_correlativo,
            activo: r.d_activo,
            solo_cotizacion: r.d_solo_cotizacion,
          },
    canal: r.c_id === null ? undefined : { id: r.c_id, nombre: r.c_nombre, activo: r.c_activo },
    cliente: r.k_id === null ? undefined : { id: r.k_id, nombre: r.k_nombre, limite_credito: r.k_limite_credito, activo: r.k_activo },
  };
}

/** `findVentaCatalog` for many sales: the company's document types, channels and customers among the ids, by id. */
export async function findVentaCatalogs(
  db: Db,
  empresaId: number,
  ids: { documentoIds: readonly number[]; canalIds: readonly number[]; clienteIds: readonly number[] },
): Promise<{ documentos: Map<number, DocumentoRow>; canales: Map<number, Canal>; clientes: Map<number, Cliente> }> {
  const among = async <T extends { id: number }>(values: readonly number[], find: (ids: number[]) => Promise<T[]>) =>
    new Map((values.length > 0 ? await find([...new Set(values)]) : []).map((r) => [r.id, r]));
  const [documentos, canales, clientes] = await Promise.all([
    among(ids.documentoIds, (v) =>
      db.selectFrom('documentos').select(DOCUMENTO_COLUMNS).where('empresa_id', '=', empresaId).where('id', 'in', v).execute(),
    ),
    among(ids.canalIds, (v) =>
      db.selectFrom('canales').select(['id', 'nombre', 'activo']).where('empresa_id', '=', empresaId).where('id', 'in', v).execute(),
    ),
    among(ids.clienteIds, (v) =>
      db
        .selectFrom('clientes')
        .select(['id', 'nombre', 'limite_credito', 'activo'])
        .where('empresa_id', '=', empresaId)
        .where('id', 'in', v)
        .execute(),
    ),
  ]);
  return { documentos, canales, clientes };
}

/**
 * With `lock`, credit checks of the customer happen one after another. The lock does not conflict
 * with the key-share lock a sale's foreign key takes, so a sale that does not check the credit
 * never waits for it (nor, holding its document type, makes a credit check wait in a cycle).
 */
export async function findCliente(db: Db, empresaId: number, id: number, options: { lock?: boolean } = {}) {
  const q = db
    .selectFrom('clientes')
    .select(['id', 'nombre', 'limite_credito', 'activo'])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id);
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

/** The company's customer with this (lower-case) email: the active one first, then the oldest. */
export async function findClienteIdByEmail(db: Db, empresaId: number, email: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('clientes')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where(sql`lower(email)`, '=', email)
    .orderBy('activo', 'desc')
    .orderBy('id')
    .executeTakeFirst();
  return row?.id;
}

/**
 * The company's customer with this email (as `findClienteIdByEmail` finds it), created when there
 * is none. Serialised per company and email, so two orders of a new customer create one.
 */
export async function findOrCreateClienteByEmail(
  trx: Transaction<SalesDb>,
  empresaId: number,
  email: string,
  nombre: string | null | undefined,
): Promise<{ id: number; creado: boolean }> {
  await sql`select pg_advisory_xact_lock(hashtext('cliente-email'), hashtext(${`${empresaId}:${email}`}))`.execute(trx);
  const existing = await findClienteIdByEmail(trx, empresaId, email);
  if (existing !== undefined) return { id: existing, creado: false };
  const { id } = await trx
    .insertInto('clientes')
    .values({ empresa_id: empresaId, nombre: nombre ?? email, email })
    .returning('id')
    .executeTakeFirstOrThrow();
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
