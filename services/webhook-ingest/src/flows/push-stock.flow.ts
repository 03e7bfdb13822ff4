import type { Kysely } from 'kysely';
import type { Logger } from '@erp/bus';
import { Decimal, type TenantContext } from '@erp/contracts';
import {
  failStock,
  pushTargets,
  recordPush,
  saveTiendaProductos,
  settleStock,
  knownTiendaProductos,
  type ClaimedStock,
  type PushTarget,
} from '../db/stock.repository';
import type { WebhookDb } from '../db/tables';
import { credentialsContext, openSecrets, type Keyring, type ShopSecrets } from '../domain/credentials';
import type { InventoryPort } from '../ports/inventory.port';
import { openTargetShop, type CallPolicy, type TiendaApi, type StockWriteItem } from '../ports/shops';

export interface StockPushDeps {
  db: Kysely<WebhookDb>;
  keyring: Keyring;
  policy: CallPolicy;
  owner: string;
  inventory: Pick<InventoryPort, 'resolve'>;
  context(empresaId: number, usuarioId: number, requestId: string): Promise<TenantContext>;
  /** The shop's client (tests may put another in its place). */
  openTienda?: (target: PushTarget, secrets: ShopSecrets) => TiendaApi;
  logger: Logger;
  /** A push the shop took: its lag (first change → written), products written and changes they carried. */
  onPushed?: (lagMs: number, writes: number, cambios: number) => void;
  /** Products whose push failed (retried later). */
  onFailed?: (count: number) => void;
}

/** How long a failed product waits before its next push: 1 s, doubling, at most a minute. */
export const stockRetryMs = (intentos: number) => Math.min(60_000, 1_000 * 2 ** Math.min(intentos, 6));

/** A SKU the shop did not have is looked for again after this long. */
const RECHECK_UNMAPPED_MS = 3_600_000;
/** `inventory.product.resolve` takes at most 500 items. */
const RESOLVE_MAX = 500;

/**
 * Pushes the products taken, each integration on its own (one shop's failure or slowness never
 * holds another's): our stock in the integration's warehouse, read now (after the taking, so it
 * holds every change the marks stood for), less `stock_colchon`, never below 0, whole units. A
 * product the shop has no SKU for is settled with nothing written; a write the shop refused, or a
 * call that failed, leaves the product owed again with its reason, retried with backoff.
 */
export async function pushStock(deps: StockPushDeps, claimed: readonly ClaimedStock[]): Promise<void> {
  const byIntegracion = new Map<number, ClaimedStock[]>();
  for (const c of claimed) byIntegracion.set(c.integracion_id, [...(byIntegracion.get(c.integracion_id) ?? []), c]);
  const targets = new Map((await pushTargets(deps.db, [...byIntegracion.keys()])).map((t) => [t.id, t]));
  await Promise.all(
    [...byIntegracion].map(async ([id, rows]) => {
      try {
        await pushIntegracion(deps, targets.get(id), rows);
      } catch (err) {
        const error = (err as Error).message.slice(0, 500);
        deps.logger.warn({ integracion: id, productos: rows.length, err: error }, 'stock push failed; retried');
        await failStock(
          deps.db,
          deps.owner,
          id,
          rows.map((r) => r.producto_id),
          error,
          stockRetryMs(Math.min(...rows.map((r) => r.intentos))),
        );
        deps.onFailed?.(rows.length);
      }
    }),
  );
}

async function pushIntegracion(deps: StockPushDeps, target: PushTarget | undefined, rows: ClaimedStock[]): Promise<void> {
  const { db, owner } = deps;
  const integracionId = rows[0]!.integracion_id;
  // An integration that no longer shows our stock owes its shop nothing.
  if (!target || !target.activo || !target.sincronizar_stock || !target.tienda_url || !target.tienda_credenciales) {
    await settleStock(
      db,
      owner,
      integracionId,
      rows.map((r) => ({ producto_id: r.producto_id, enviado: null, cambios: r.cambios })),
    );
    return;
  }
  const secrets = openSecrets(deps.keyring, target.tienda_credenciales, credentialsContext(target.empresa_id, target.plataforma));
  const tienda = (deps.openTienda ?? openTargetShop(deps.policy))(target, secrets);
  const cantidadOf = await stockNow(deps, target, rows);
  const known = await tiendaProductos(db, tienda, integracionId, rows);

  const items: WriteItem[] = [];
  const unmapped: ClaimedStock[] = [];
  for (const row of rows) {
    const ref = known.get(row.codigo);
    if (!ref?.id_externo) unmapped.push(row);
    else
      items.push({
        codigo: row.codigo,
        cantidad: cantidadOf(row.producto_id),
        ref: { id_externo: ref.id_externo, id_padre: ref.id_padre },
        leido: ref.leido,
        row,
      });
  }
  await settleStock(
    db,
    owner,
    integracionId,
    unmapped.map((r) => ({ producto_id: r.producto_id, enviado: null, cambios: r.cambios })),
  );
  if (items.length === 0) return;
  await recordWrites(deps, integracionId, items, await tienda.setStock(items, target.tienda_ubicacion, `stock-${integracionId}`));
}

/** A product's write to the shop, with the claimed row it settles. */
type WriteItem = StockWriteItem & { row: ClaimedStock };

/**
 * Our stock now, in the integration's warehouse, as the quantity the shop is to show of each
 * product: less `stock_colchon`, never below 0, whole units.
 */
async function stockNow(deps: StockPushDeps, target: PushTarget, rows: readonly ClaimedStock[]): Promise<(productoId: number) => number> {
  const ctx = await deps.context(target.empresa_id, target.usuario_id, `stock-${target.id}-${Date.now()}`);
  const stock = new Map<number, string | null>();
  for (let i = 0; i < rows.length; i += RESOLVE_MAX) {
    const part = rows.slice(i, i + RESOLVE_MAX);
    const answer = await deps.inventory.resolve(ctx, {
      id_bodega: target.bodega_id,
      items: part.map((r) => ({ id_producto: r.producto_id })),
    });
    answer.items.forEach((item, k) => stock.set(part[k]!.producto_id, item.ok ? item.producto.stock : null));
  }
  return (productoId) => {
    const units = new Decimal(stock.get(productoId) ?? 0).floor().minus(target.stock_colchon);
    return Math.max(0, units.toNumber());
  };
}

/** How the shop names the products: from what we learnt, else asked (a SKU it lacked is asked again after an hour). */
async function tiendaProductos(db: Kysely<WebhookDb>, tienda: TiendaApi, integracionId: number, rows: readonly ClaimedStock[]) {
  const codigos = rows.map((r) => r.codigo);
  const known = await knownTiendaProductos(db, integracionId, codigos);
  const ask = codigos.filter((c) => {
    const k = known.get(c);
    return !k || (k.id_externo === null && Date.now() - k.revisado_at.getTime() > RECHECK_UNMAPPED_MS);
  });
  if (ask.length > 0) {
    const found = await tienda.findProductos(ask);
    const learnt = ask.map((codigo) => ({
      codigo,
      id_externo: found.get(codigo)?.id_externo ?? null,
      id_padre: found.get(codigo)?.id_padre ?? null,
      leido: null,
    }));
    await saveTiendaProductos(db, integracionId, learnt);
    for (const l of learnt) known.set(l.codigo, { ...l, revisado_at: new Date() });
  }
  return known;
}

/**
 * What the shop answered to the writes: a written product is settled with the quantity it now
 * shows, a refused one is owed again with its reason.
 */
async function recordWrites(
  deps: StockPushDeps,
  integracionId: number,
  items: readonly WriteItem[],
  result: Awaited<ReturnType<TiendaApi['setStock']>>,
): Promise<void> {
  const { db, owner } = deps;
  const byCodigo = new Map(items.map((i) => [i.codigo, i]));
  const written = result.written.map((w) => ({ ...w, item: byCodigo.get(w.codigo)! }));
  await saveTiendaProductos(
    db,
    integracionId,
    written.map((w) => ({ codigo: w.codigo, id_externo: w.item.ref.id_externo, id_padre: w.item.ref.id_padre, leido: w.cantidad })),
  );
  await settleStock(
    db,
    owner,
    integracionId,
    written.map((w) => ({ producto_id: w.item.row.producto_id, enviado: w.cantidad, cambios: w.item.row.cambios })),
  );
  if (written.length > 0) {
    const first = Math.min(...written.map((w) => w.item.row.tomado_desde.getTime()));
    const cambios = written.reduce((s, w) => s + w.item.row.cambios, 0);
    await recordPush(db, integracionId, Date.now() - first, written.length, cambios);
    deps.onPushed?.(Date.now() - first, written.length, cambios);
  }
  for (const f of result.failed) {
    const row = byCodigo.get(f.codigo)!.row;
    // Forget what we thought the shop held: the next attempt reads it again.
    await saveTiendaProductos(db, integracionId, [
      { codigo: f.codigo, id_externo: byCodigo.get(f.codigo)!.ref.id_externo, id_padre: byCodigo.get(f.codigo)!.ref.id_padre, leido: null },
    ]);
    await failStock(db, owner, integracionId, [row.producto_id], f.error.slice(0, 500), stockRetryMs(row.intentos));
  }
  if (result.failed.length > 0) deps.onFailed?.(result.failed.length);
}
