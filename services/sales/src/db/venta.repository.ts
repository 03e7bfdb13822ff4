import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { SaleInput } from '@erp/contracts';
import type { DocumentoRow } from '../domain/venta-rules';
import type { StoredVenta } from '../domain/venta-update';
import { toVenta, type VentaRow } from '../domain/venta-row';
import { DETALLE_COLUMNS, VENTA_COLUMNS } from './venta-read.repository';
import { SALES_SCHEMA, salesTable, type SalesDb, type VentaDetallesTable, type VentasTable } from './tables';

type Db = Kysely<SalesDb> | Transaction<SalesDb>;

export const REFERENCIA_INDEX = 'ventas_empresa_referencia_key';

/**
 * Serialises the requests that carry one reference for the rest of the transaction, so a
 * concurrent duplicate waits for the first to commit and then finds its sale instead of
 * reserving stock it would have to give back. The unique index stays the guarantee.
 */
export async function lockReferencia(trx: Transaction<SalesDb>, empresaId: number, referencia: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`venta:${empresaId}:${referencia}`}, 0))`.execute(trx);
}

/** `lockReferencia` for many references at once, taken in one order so that two requests sharing some never wait on each other in a cycle. */
export async function lockReferencias(trx: Transaction<SalesDb>, empresaId: number, referencias: readonly string[]): Promise<void> {
  const keys = [...new Set(referencias)].map((r) => `venta:${empresaId}:${r}`).sort();
  if (keys.length === 0) return;
  // A function scan yields the array in order, and the locks are taken row by row as it does.
  await sql`select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${keys}::text[]) as k`.execute(trx);
}

/** `nextVentaId` for `n` sales, in one statement. */
export async function nextVentaIds(db: Db, n: number): Promise<number[]> {
  if (n === 0) return [];
  const { rows } = await sql<{ id: number }>`select nextval(pg_get_serial_sequence(${`${SALES_SCHEMA}.ventas`}, 'id'))::int as id
      from generate_series(1, ${n}::int)`.execute(db);
  return rows.map((r) => r.id);
}

/**
 * The document types among `ids`, locked until the transaction ends in id order, by id: sales
 * numbered under these locks take their numbers one after another with `issueVenta`'s.
 */
export async function lockDocumentos(
  trx: Transaction<SalesDb>,
  empresaId: number,
  ids: readonly number[],
): Promise<Map<number, DocumentoRow>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('documentos')
    .select(['id', 'sucursal_id', 'nombre', 'prefijo', 'correlativo', 'activo', 'solo_cotizacion'])
    .where('empresa_id', '=', empresaId)
    .where('id', 'in', [...new Set(ids)])
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** A sale numbered under its document type's lock (see `lockDocumentos`), with its id taken before. */
export type VentaNumerada = Insertable<VentasTable> & { id: number; numero: number; correlativo: string; nombre_documento: string };

/**
 * Writes sales already numbered and their lines, and moves each document type's counter past the
 * numbers used, in three statements. The caller holds the document types' locks
 * (`lockDocumentos`) and gave each sale the next number of its type, in order.
 */
export async function insertVentasNumeradas(
  trx: Transaction<SalesDb>,
  empresaId: number,
  ventas: readonly VentaNumerada[],
  detalles: readonly (DetalleToIssue & { venta_id: number })[],
): Promise<void> {
  if (ventas.length === 0) return;
  const columns = Object.keys(ventas[0]!);
  await sql`
    insert into ${salesTable('ventas')} (${sql.join(columns.map((c) => sql.id(c)))})
    overriding system value
    select ${sql.join(columns.map((c) => sql.ref(`r.${c}`)))}
      from jsonb_populate_recordset(null::${salesTable('ventas')}, ${JSON.stringify(ventas)}::jsonb) r`.execute(trx);
  if (detalles.length > 0) {
    const detalleColumnNames = Object.keys(detalles[0]!);
    await sql`
      insert into ${salesTable('venta_detalles')} (${sql.join(detalleColumnNames.map((c) => sql.id(c)))})
      select ${sql.join(detalleColumnNames.map((c) => sql.ref(`l.${c}`)))}
        from jsonb_populate_recordset(null::${salesTable('venta_detalles')}, ${JSON.stringify(detalles)}::jsonb) l`.execute(trx);
  }
  const used = new Map<number, number>();
  for (const v of ventas) used.set(v.documento_id, (used.get(v.documento_id) ?? 0) + 1);
  const values = sql.join([...used].map(([id, n]) => sql`(${id}::int, ${n}::int)`));
  await sql`
    update ${salesTable('documentos')} d set correlativo = d.correlativo + u.n, updated_at = now()
      from (values ${values}) as u (id, n)
     where d.empresa_id = ${empresaId} and d.id = u.id`.execute(trx);
}

/**
 * An id for a sale about to be issued, taken before it is written so that the stock it reserves
 * first can name it. A sale that is not written after all leaves its id unused, as a rolled-back
 * insert does.
 */
export async function nextVentaId(db: Db): Promise<number> {
  const { rows } = await sql<{ id: number }>`select nextval(pg_get_serial_sequence(${`${SALES_SCHEMA}.ventas`}, 'id'))::int as id`.execute(
    db,
  );
  return rows[0]!.id;
}

/** A sale to issue: every column but those its document type's number decides (its `id` when it was taken before). */
export type VentaToIssue = Omit<Insertable<VentasTable>, 'numero' | 'correlativo' | 'nombre_documento' | 'documento'> & {
  /** The sale document; its `documento.numero` and `documento.correlativo` are filled in with the number taken. */
  documento: { documento: object };
};

/** A line of a sale to issue: every column but the sale's id. */
export type DetalleToIssue = Omit<Insertable<VentaDetallesTable>, 'venta_id'>;

/**
 * Issues a sale in one statement: takes its document type's next number (the row stays locked
 * until the transaction ends, so sales of one type are numbered one after another, and a sale
 * rolled back leaves its number to the next), writes the sale with it (`correlativo` is the
 * prefix of the locked row and the number, `nombre_documento` its name) and writes its lines.
 * Taken last in the transaction, the lock is held for this statement and the commit only.
 * Answers the sale as a read would see it, lines in order; undefined, with nothing written, when
 * the document type cannot issue it (missing, inactive, of another branch, only for quotations).
 */
export async function issueVenta(
  trx: Transaction<SalesDb>,
  venta: VentaToIssue,
  detalles: readonly DetalleToIssue[],
): Promise<SaleInput | undefined> {
  const columns = Object.keys(venta).filter((c) => c !== 'documento');
  const detalleColumnNames = detalles.length > 0 ? Object.keys(detalles[0]!) : [];
  const { rows } = await sql<VentaRow & Record<`l_${(typeof DETALLE_COLUMNS)[number]}`, unknown>>`
    with doc as (
      update ${salesTable('documentos')} set correlativo = correlativo + 1, updated_at = now()
       where empresa_id = ${venta.empresa_id} and id = ${venta.documento_id} and activo and sucursal_id = ${venta.sucursal_id}
         and (not solo_cotizacion or ${venta.estado} = 'Cotizacion')
      returning nombre, prefijo, correlativo - 1 as numero
    ),
    v as (
      insert into ${salesTable('ventas')} (${sql.join(columns.map((c) => sql.id(c)))}, documento, numero, correlativo, nombre_documento)
      overriding system value
      select ${sql.join(columns.map((c) => sql.ref(`r.${c}`)))},
             jsonb_set(jsonb_set(r.documento, '{documento,numero}', to_jsonb(doc.numero)), '{documento,correlativo}', to_jsonb(doc.prefijo || doc.numero)),
             doc.numero, doc.prefijo || doc.numero, doc.nombre
        from doc, jsonb_populate_record(null::${salesTable('ventas')}, ${JSON.stringify(venta)}::jsonb) r
      returning *
    ),
    d as (
      insert into ${salesTable('venta_detalles')} (venta_id${sql.join(
        detalleColumnNames.map((c) => sql`, ${sql.id(c)}`),
        sql``,
      )})
      select v.id${sql.join(
        detalleColumnNames.map((c) => sql`, ${sql.ref(`l.${c}`)}`),
        sql``,
      )}
        from v, jsonb_populate_recordset(null::${salesTable('venta_detalles')}, ${JSON.stringify(detalles)}::jsonb) l
      returning linea, ${sql.join(DETALLE_COLUMNS.map((c) => sql.id(c)))}
    )
    select ${sql.join(VENTA_COLUMNS.map((c) => (typeof c === 'string' ? sql.ref(c) : c)))},
           ${sql.join(DETALLE_COLUMNS.map((c) => sql`${sql.ref(`d.${c}`)} as ${sql.id(`l_${c}`)}`))}
      from v left join d on true
     order by d.linea`.execute(trx);
  const first = rows[0];
  if (!first) return undefined;
  const detallesStored = rows.flatMap((row) => {
    if (row.l_id === null) return [];
    const detalle = Object.fromEntries(DETALLE_COLUMNS.filter((c) => c !== 'venta_id').map((c) => [c, row[`l_${c}`]]));
    return [detalle as SaleInput['detalles'][number]];
  });
  return toVenta(first, detallesStored);
}

/** The sale row locked for a back-office change, with what annulling needs. */
export async function lockVenta(trx: Transaction<SalesDb>, empresaId: number, id: number) {
  return trx
    .selectFrom('ventas')
    .select([
      'id',
      'estado',
      'origen',
      'referencia_externa',
      'bodega_id',
      'stock_devuelto_at',
      'clave_reserva',
      'revision_stock',
      'devoluciones_activas',
    ])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function updateVenta(
  trx: Transaction<SalesDb>,
  id: number,
  changes: Partial<Pick<VentasTable, 'estado' | 'saldo' | 'stock_devuelto_at'>> & {
    documento_fiscal_emitido?: boolean;
    revision_stock?: number;
  },
): Promise<void> {
  await trx
    .updateTable('ventas')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

export type EditableVenta = StoredVenta & { origen: string; numero: number; correlativo: string; created_at: Date };

/**
 * The sale an update starts from, with its lines, its row locked until the transaction ends:
 * updates, annulments and fiscal marks of one sale happen one after another. The lines take a
 * second statement on purpose: after waiting for the lock it sees the lines the previous holder
 * committed, where a join in the locking statement would answer those of its own older snapshot.
 */
export async function lockVentaForEdit(trx: Transaction<SalesDb>, empresaId: number, id: number): Promise<EditableVenta | undefined> {
  const venta = await trx
    .selectFrom('ventas')
    .select([
      'id',
      'estado',
      'origen',
      'documento_fiscal_emitido',
      'referencia_externa',
      'fecha',
      'fecha_expiracion',
      'forma_pago',
      'observaciones',
      'sucursal_id',
      'bodega_id',
      'documento_id',
      'documento_emisor_id',
      'canal_id',
      'cliente_id',
      'usuario_id',
      'nombre_usuario',
      'monto_pago',
      'cambio',
      'saldo',
      'revision_stock',
      'devoluciones_activas',
      'numero',
      'correlativo',
      'created_at',
    ])
    .where('empresa_id', '=', empresaId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!venta) return undefined;
  const lines = await trx
    .selectFrom('venta_detalles')
    .select(['id', 'id_producto', 'cantidad', 'precio', 'descuento', 'porcentaje_impuesto', 'id_presentacion', 'mueve_stock'])
    .where('empresa_id', '=', empresaId)
    .where('venta_id', '=', id)
    .orderBy('linea')
    .execute();
  return { ...venta, lines };
}

export type EditedVenta = Omit<
  Updateable<VentasTable>,
  'id' | 'empresa_id' | 'numero' | 'correlativo' | 'referencia_externa' | 'clave_reserva' | 'created_at'
>;

export async function saveEditedVenta(trx: Transaction<SalesDb>, id: number, venta: EditedVenta): Promise<void> {
  await trx.updateTable('ventas').set(venta).where('id', '=', id).execute();
}

export type DetalleRow = Omit<Insertable<VentaDetallesTable>, 'id' | 'created_at'>;

/**
 * Replaces the lines of a sale in one statement: a row with `id` updates that line of the sale in
 * place (only if something changed: an untouched line keeps its `updated_at`), a row without one
 * is inserted, and the sale's other lines are deleted.
 */
export async function replaceDetalles(
  trx: Transaction<SalesDb>,
  ventaId: number,
  rows: ReadonlyArray<DetalleRow & { id: number | null }>,
): Promise<void> {
  const kept = rows.flatMap((r) => (r.id !== null ? [r] : []));
  const added = rows.filter((r) => r.id === null).map(({ id: _id, ...row }) => row);
  const columns = rows.length > 0 ? Object.keys(rows[0]!).filter((c) => c !== 'id') : [];
  const compared = columns.filter((c) => c !== 'updated_at');
  const table = salesTable('venta_detalles');
  const list = (prefix: string, names: readonly string[]) => sql.join(names.map((c) => sql.ref(`${prefix}.${c}`)));
  await sql`
    with removed as (
      delete from ${table} where venta_id = ${ventaId} and not (id = any(${kept.map((r) => r.id)}::int[]))
    ),
    changed as (
      update ${table} d set (${sql.join(columns.map((c) => sql.id(c)))}) = (${list('x', columns)})
        from jsonb_populate_recordset(null::${table}, ${JSON.stringify(kept)}::jsonb) x
       where d.id = x.id and d.venta_id = ${ventaId} and (${list('d', compared)}) is distinct from (${list('x', compared)})
    )
    insert into ${table} (${sql.join(columns.map((c) => sql.id(c)))})
    select ${list('x', columns)} from jsonb_populate_recordset(null::${table}, ${JSON.stringify(added)}::jsonb) x`.execute(trx);
}
