import { sql, type Kysely, type Transaction } from 'kysely';
import { enqueueEvent, enqueueEvents } from '@erp/bus';
import { Decimal, STOCK_SCALE, inventoryEvents, type CausaStock, type TipoProducto } from '@erp/contracts';
import type { PlannedMove, StockKey } from '../domain/stock-plan';
import type { BodegaRow } from '../domain/resolve-product';
import { INVENTORY_SCHEMA, type InventoryDb, type TipoMovimiento } from './tables';

type Db = Kysely<InventoryDb> | Transaction<InventoryDb>;

const keyOf = (k: StockKey) => `${k.productoId}:${k.bodegaId}`;
const byKey = (a: StockKey, b: StockKey) => a.productoId - b.productoId || a.bodegaId - b.bodegaId;

/**
 * A warehouse of the company with its branch, or undefined (another company's reads as missing).
 * With `lock`, both rows are share-locked: the first step of the writers' lock order (see lockStock).
 */
export async function findBodega(db: Db, empresaId: number, id: number, options: { lock?: boolean } = {}): Promise<BodegaRow | undefined> {
  const q = db
    .selectFrom('bodegas as b')
    .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
    .where('b.empresa_id', '=', empresaId)
    .where('b.id', '=', id)
    .select(['b.id', 'b.nombre', 'b.activo', 's.id as sucursal_id', 's.nombre as sucursal_nombre', 's.activo as sucursal_activo']);
  return (options.lock ? q.forShare() : q).executeTakeFirst();
}

/** The company's warehouses among `ids` with their branches, by id; with `lock`, share-locked in id order (see findBodega). */
export async function findBodegas(
  db: Db,
  empresaId: number,
  ids: readonly number[],
  options: { lock?: boolean } = {},
): Promise<Map<number, BodegaRow>> {
  if (ids.length === 0) return new Map();
  const q = db
    .selectFrom('bodegas as b')
    .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
    .where('b.empresa_id', '=', empresaId)
    .where('b.id', 'in', [...new Set(ids)])
    .select(['b.id', 'b.nombre', 'b.activo', 's.id as sucursal_id', 's.nombre as sucursal_nombre', 's.activo as sucursal_activo'])
    .orderBy('b.id');
  const rows = await (options.lock ? q.forShare() : q).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** Ids among `ids` that are warehouses of the company. */
export async function companyBodegaIds(db: Db, empresaId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('bodegas')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Set(rows.map((r) => r.id));
}

export interface StockProducto {
  id: number;
  codigo: string;
  tipo: TipoProducto;
}

/**
 * The company's live products among `ids`, by id. With `lock`, their rows are locked in id order:
 * the second step of the writers' lock order (see lockStock).
 */
export async function findStockProductos(
  db: Db,
  empresaId: number,
  ids: readonly number[],
  options: { lock?: boolean } = {},
): Promise<Map<number, StockProducto>> {
  if (ids.length === 0) return new Map();
  const q = db
    .selectFrom('productos')
    .select(['id', 'codigo', 'tipo'])
    .where('empresa_id', '=', empresaId)
    .where('deleted_at', 'is', null)
    .where('id', 'in', [...new Set(ids)])
    .orderBy('id');
  const rows = await (options.lock ? q.forNoKeyUpdate() : q).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export interface LockedStock {
  id: number;
  stock: string;
}

/**
 * Locks the stock entries of `keys` until the transaction ends, creating missing ones at 0 when
 * `create` is set (so stock can be moved into or below them; given keys, only those are created). Concurrent operations over the
 * same products queue instead of deadlocking because every writer locks in one order, the order
 * the summary triggers and warehouse activation follow too: the warehouses and their branches
 * (shared), the products by id, then the entries by (product, warehouse). Concurrent reservations
 * therefore see each other's result: they can never together take more than there is.
 * `heldLugaresAndProductos`: the caller already took the first two steps (findBodega and
 * findStockProductos with `lock`, in that order) for every key.
 */
export async function lockStock(
  trx: Transaction<InventoryDb>,
  empresaId: number,
  keys: readonly StockKey[],
  options: { create: boolean | readonly StockKey[]; heldLugaresAndProductos?: boolean },
): Promise<Map<string, LockedStock>> {
  if (keys.length === 0) return new Map();
  if (!options.heldLugaresAndProductos) await lockLugaresAndProductos(trx, empresaId, keys);
  const lockInventarios = () =>
    trx
      .selectFrom('inventarios')
      .select(['id', 'producto_id', 'bodega_id', sql<string>`stock::text`.as('stock')])
      .where('empresa_id', '=', empresaId)
      .where((eb) => eb.or(keys.map((k) => eb.and([eb('producto_id', '=', k.productoId), eb('bodega_id', '=', k.bodegaId)]))))
      .orderBy('producto_id')
      .orderBy('bodega_id')
      .forUpdate()
      .execute();
  // Usually every entry exists: one statement. Missing ones are created (a concurrent creator
  // waits on the unique key), then all are locked again; holding the products' locks, no writer
  // that follows the order can hold an entry this waits for.
  let rows = await lockInventarios();
  const creatable = options.create === true ? keys : options.create || [];
  const found = new Set(rows.map((r) => keyOf({ productoId: r.producto_id, bodegaId: r.bodega_id })));
  const missing = creatable.filter((k) => !found.has(keyOf(k)));
  if (missing.length > 0) {
    await trx
      .insertInto('inventarios')
      .values(
        [...missing].sort(byKey).map((k) => ({ empresa_id: empresaId, producto_id: k.productoId, bodega_id: k.bodegaId, stock: '0' })),
      )
      .onConflict((oc) => oc.columns(['producto_id', 'bodega_id']).doNothing())
      .execute();
    rows = await lockInventarios();
  }
  return new Map(rows.map((r) => [keyOf({ productoId: r.producto_id, bodegaId: r.bodega_id }), { id: r.id, stock: r.stock }]));
}

/** The first two steps of the writers' lock order for `keys`: their warehouses and branches (shared), then their products by id. */
async function lockLugaresAndProductos(trx: Transaction<InventoryDb>, empresaId: number, keys: readonly StockKey[]): Promise<void> {
  await trx
    .selectFrom('bodegas as b')
    .innerJoin('sucursales as s', 's.id', 'b.sucursal_id')
    .select('b.id')
    .where('b.empresa_id', '=', empresaId)
    .where('b.id', 'in', [...new Set(keys.map((k) => k.bodegaId))])
    .forShare()
    .execute();
  await trx
    .selectFrom('productos')
    .select('id')
    .where('empresa_id', '=', empresaId)
    .where('id', 'in', [...new Set(keys.map((k) => k.productoId))])
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

export function lockedStockOf(locked: Map<string, LockedStock>) {
  return (key: StockKey) => locked.get(keyOf(key))?.stock;
}

export interface MovimientoMeta {
  tipo: TipoMovimiento;
  origen: string;
  /** What the operation was made for: partners read it in `stock.changed`. */
  causa: CausaStock;
  clave: string | null;
  concepto: string | null;
}

/**
 * Applies planned moves to locked entries and writes one ledger row per move with the stock the
 * update left (under the lock it is the planned one), in one statement of the caller's
 * transaction. Each entry moves at most once per call: a plan holds one move per entry.
 */
export async function applyMoves(
  trx: Transaction<InventoryDb>,
  empresaId: number,
  locked: Map<string, LockedStock>,
  moves: readonly PlannedMove[],
  meta: MovimientoMeta,
): Promise<PlannedMove[]> {
  if (moves.length === 0) return [];
  const entries = moves.map((move) => {
    const entry = locked.get(keyOf(move));
    if (!entry) throw new Error(`Stock entry ${keyOf(move)} was not locked before moving it`);
    return entry;
  });
  if (new Set(entries).size !== entries.length) throw new Error('A plan moved one stock entry twice');
  const values = sql.join(moves.map((move, i) => sql`(${entries[i]!.id}::bigint, ${move.cantidad}::numeric)`));
  // Raw SQL is not bound to the service's schema like the query builder: tables are qualified.
  const { rows } = await sql<{ id: number; producto_id: number; bodega_id: number; stock: string; cantidad: string; codigo: string }>`
    with m (id, cantidad) as (values ${values}),
    moved as (
      update ${sql.table(`${INVENTORY_SCHEMA}.inventarios`)} i set stock = i.stock + m.cantidad, updated_at = now()
      from m where i.id = m.id and i.empresa_id = ${empresaId}
      returning i.id, i.producto_id, i.bodega_id, i.stock, m.cantidad
    ),
    ledger as (
      insert into ${sql.table(`${INVENTORY_SCHEMA}.movimientos`)} (empresa_id, producto_id, bodega_id, tipo, cantidad, stock_resultante, origen, clave, concepto)
      select ${empresaId}, producto_id, bodega_id, ${meta.tipo}, cantidad, stock, ${meta.origen}, ${meta.clave}, ${meta.concepto} from moved
    )
    select moved.id, moved.producto_id, moved.bodega_id, moved.stock::text as stock, moved.cantidad::text as cantidad, p.codigo
    from moved join ${sql.table(`${INVENTORY_SCHEMA}.productos`)} p on p.id = moved.producto_id`.execute(trx);
  // Partners follow stock through this event (interface 1.5.0); it commits with the movements.
  // Its movements follow the plan, whatever order the statement answered in.
  const rowOf = new Map(rows.map((r) => [Number(r.id), r]));
  const ordered = entries.flatMap((entry) => rowOf.get(Number(entry.id)) ?? []);
  await enqueueEvent(trx, inventoryEvents, 'events.inventory.stock.changed', {
    empresa_id: empresaId,
    causa: meta.causa,
    movimientos: ordered.map((r) => ({
      id_producto: Number(r.producto_id),
      codigo: r.codigo,
      id_bodega: Number(r.bodega_id),
      stock: r.stock,
      cambio: r.cantidad,
      motivo: meta.tipo,
      origen: meta.origen,
      referencia: meta.clave,
    })),
  });
  return moves.map((move, i) => {
    const entry = entries[i]!;
    const stock = rowOf.get(Number(entry.id))?.stock;
    if (stock === undefined) throw new Error(`Stock entry ${keyOf(move)} vanished while locked`);
    entry.stock = stock;
    return { ...move, stockResultante: stock };
  });
}

/**
 * `applyMoves` for several operations of one transaction, each after the one before it, in a
 * constant number of statements: every ledger row in one insert (in order, each with the stock its
 * own operation left), each moved entry updated once by the sum of its moves, and one
 * `stock.changed` event per operation in one insert. The rows, the entries and the events are the
 * ones `applyMoves` would leave called once per operation in the same order: the stock trigger sees
 * each entry go from its first value to its last, so the products' counters get the same sum of
 * changes, and the products' stamps are the transaction's either way.
 * Each operation's moves must be planned from the stock the ones before it left (the planned
 * `stockResultante` chain is checked against the locked stock and the entries' updated values).
 */
export async function applyMovesInOrder(
  trx: Transaction<InventoryDb>,
  empresaId: number,
  locked: Map<string, LockedStock>,
  operations: ReadonlyArray<{ moves: readonly PlannedMove[]; meta: MovimientoMeta }>,
): Promise<void> {
  const ledger: Array<{ entry: LockedStock; move: PlannedMove; meta: MovimientoMeta }> = [];
  const last = new Map<LockedStock, string>();
  for (const { moves, meta } of operations) {
    const entries = moves.map((move) => {
      const entry = locked.get(keyOf(move));
      if (!entry) throw new Error(`Stock entry ${keyOf(move)} was not locked before moving it`);
      return entry;
    });
    if (new Set(entries).size !== entries.length) throw new Error('A plan moved one stock entry twice');
    moves.forEach((move, i) => {
      const entry = entries[i]!;
      const before = new Decimal(last.get(entry) ?? entry.stock);
      if (!before.plus(move.cantidad).eq(move.stockResultante)) {
        throw new Error(`Stock entry ${keyOf(move)} was planned from another stock than the one before it left`);
      }
      last.set(entry, move.stockResultante);
      ledger.push({ entry, move, meta });
    });
  }
  if (ledger.length === 0) return;

  // Raw SQL is not bound to the service's schema like the query builder: tables are qualified.
  const moved = [...last.keys()];
  const { rows } = await sql<{ id: number; stock: string; codigo: string }>`
    with m (id, cambio) as (
      select * from unnest(${moved.map((e) => e.id)}::bigint[], ${moved.map((e) => new Decimal(last.get(e)!).minus(e.stock).toFixed(STOCK_SCALE))}::numeric[])
    ),
    moved as (
      update ${sql.table(`${INVENTORY_SCHEMA}.inventarios`)} i set stock = i.stock + m.cambio, updated_at = now()
      from m where i.id = m.id and i.empresa_id = ${empresaId}
      returning i.id, i.producto_id, i.stock
    )
    select moved.id, moved.stock::text as stock, p.codigo
    from moved join ${sql.table(`${INVENTORY_SCHEMA}.productos`)} p on p.id = moved.producto_id`.execute(trx);
  const after = new Map(rows.map((r) => [Number(r.id), r]));
  for (const entry of moved) {
    const row = after.get(Number(entry.id));
    if (!row) throw new Error(`Stock entry ${entry.id} vanished while locked`);
    if (row.stock !== last.get(entry)) throw new Error(`Stock entry ${entry.id} moved to ${row.stock}, planned ${last.get(entry)}`);
  }

  // Inserted in order: the ledger's ids follow the operations as they would one call after another.
  const column = <T>(f: (row: (typeof ledger)[number]) => T) => ledger.map(f);
  await sql`
    insert into ${sql.table(`${INVENTORY_SCHEMA}.movimientos`)} (empresa_id, producto_id, bodega_id, tipo, cantidad, stock_resultante, origen, clave, concepto)
    select ${empresaId}, producto_id, bodega_id, tipo, cantidad, stock_resultante, origen, clave, concepto
    from unnest(
      ${column((r) => r.move.productoId)}::integer[], ${column((r) => r.move.bodegaId)}::integer[], ${column((r) => r.meta.tipo)}::text[],
      ${column((r) => r.move.cantidad)}::numeric[], ${column((r) => r.move.stockResultante)}::numeric[], ${column((r) => r.meta.origen)}::text[],
      ${column((r) => r.meta.clave)}::text[], ${column((r) => r.meta.concepto)}::text[]
    ) with ordinality as l (producto_id, bodega_id, tipo, cantidad, stock_resultante, origen, clave, concepto, n)
    order by n`.execute(trx);

  // Partners follow stock through this event (interface 1.5.0): one per operation, as each would have sent it.
  await enqueueEvents(
    trx,
    inventoryEvents,
    'events.inventory.stock.changed',
    operations
      .filter((op) => op.moves.length > 0)
      .map(({ moves, meta }) => ({
        empresa_id: empresaId,
        causa: meta.causa,
        movimientos: moves.map((move) => ({
          id_producto: move.productoId,
          codigo: after.get(Number(locked.get(keyOf(move))!.id))!.codigo,
          id_bodega: move.bodegaId,
          stock: move.stockResultante,
          cambio: move.cantidad,
          motivo: meta.tipo,
          origen: meta.origen,
          referencia: meta.clave,
        })),
      })),
  );
  for (const [entry, stock] of last) entry.stock = stock;
}
