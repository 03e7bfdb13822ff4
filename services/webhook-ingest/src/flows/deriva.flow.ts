import type { Kysely } from 'kysely';
import { Decimal, type Deriva, type TenantContext } from '@erp/contracts';
import { knownPedidos } from '../db/conciliacion.repository';
import { owed } from './reconcile.flow';
import { markAll, pushTargets, type PushTarget } from '../db/stock.repository';
import type { WebhookDb } from '../db/tables';
import { credentialsContext, openSecrets, type Keyring, type ShopSecrets } from '../domain/credentials';
import type { InventoryPort } from '../ports/inventory.port';
import { openTargetShop, type CallPolicy, type TiendaApi } from '../ports/shops';

export interface DerivaDeps {
  db: Kysely<WebhookDb>;
  keyring: Keyring;
  policy: CallPolicy;
  inventory: Pick<InventoryPort, 'resolve'>;
  context(empresaId: number, usuarioId: number, requestId: string): Promise<TenantContext>;
  openTienda?: (target: PushTarget, secrets: ShopSecrets) => TiendaApi;
  /** A reconciliation pass of the integration now (the repair of its orders). */
  reconcile(integracionId: number): Promise<unknown>;
}

const RESOLVE_MAX = 500;

/**
 * The drift check of one integration: every SKU the shop has against our product of that code in
 * the integration's warehouse (what the shop should show: ours less `stock_colchon`, whole units,
 * never below 0; only when the integration shows our stock), and every order the shop changed in
 * the window against what we hold. With `reparar`, the products that differ are owed to the shop
 * at once (the stock push writes them) and a reconciliation pass runs.
 */
export async function checkDeriva(deps: DerivaDeps, integracionId: number, options: { reparar: boolean; dias: number }): Promise<Deriva> {
  const empty: Deriva = {
    id_integracion: integracionId,
    resultado: 'sin_tienda',
    error: null,
    productos_revisados: 0,
    stock_distinto: [],
    skus_sin_producto: [],
    pedidos_revisados: 0,
    pedidos_pendientes: [],
    reparada: false,
  };
  const [target] = await pushTargets(deps.db, [integracionId]);
  if (!target?.tienda_url || !target.tienda_credenciales) return empty;
  try {
    const secrets = openSecrets(deps.keyring, target.tienda_credenciales, credentialsContext(target.empresa_id, target.plataforma));
    const tienda = (deps.openTienda ?? openTargetShop(deps.policy))(target, secrets);
    const out: Deriva = { ...empty, resultado: 'revisada' };
    if (target.sincronizar_stock) await checkStock(deps, integracionId, target, tienda, out, options.reparar);
    out.pedidos_revisados = await checkPedidos(deps, integracionId, target, tienda, out, options.dias);
    if (options.reparar && out.pedidos_pendientes.length > 0) await deps.reconcile(integracionId);
    out.reparada = options.reparar;
    return out;
  } catch (err) {
    return { ...empty, resultado: 'fallida', error: (err as Error).message.slice(0, 500) };
  }
}

/** Every SKU the shop lists against what it should show of ours; with `reparar`, the products that differ are owed to the shop. */
async function checkStock(
  deps: DerivaDeps,
  integracionId: number,
  target: PushTarget,
  tienda: TiendaApi,
  out: Deriva,
  reparar: boolean,
): Promise<void> {
  const listed = await tienda.listStock(target.tienda_ubicacion);
  const ctx = await deps.context(target.empresa_id, target.usuario_id, `drift-${integracionId}`);
  const skus = [...listed.keys()];
  const differing: Array<{ id: number; codigo: string }> = [];
  for (let i = 0; i < skus.length; i += RESOLVE_MAX) {
    const part = skus.slice(i, i + RESOLVE_MAX);
    const answer = await deps.inventory.resolve(ctx, { id_bodega: target.bodega_id, items: part.map((codigo) => ({ codigo })) });
    answer.items.forEach((item, k) => {
      const codigo = part[k]!;
      if (!item.ok || item.producto.tipo !== 'Producto') return void out.skus_sin_producto.push(codigo);
      out.productos_revisados++;
      const esperado = Math.max(0, new Decimal(item.producto.stock ?? 0).floor().minus(target.stock_colchon).toNumber());
      const enTienda = listed.get(codigo)!.cantidad;
      if (enTienda !== esperado) {
        out.stock_distinto.push({ codigo, tienda: enTienda, esperado });
        differing.push({ id: item.producto.id, codigo });
      }
    });
  }
  out.stock_distinto.sort((a, b) => a.codigo.localeCompare(b.codigo));
  out.skus_sin_producto.sort();
  if (reparar) await markAll(deps.db, integracionId, target.empresa_id, differing);
}

/** Every order the shop changed in the last `dias` against what we hold; answers how many the shop listed. */
async function checkPedidos(
  deps: DerivaDeps,
  integracionId: number,
  target: PushTarget,
  tienda: TiendaApi,
  out: Deriva,
  dias: number,
): Promise<number> {
  const since = new Date(Date.now() - dias * 86_400_000);
  return tienda.pedidosChangedSince(since, {
    wanted: async (stamps) => {
      const known = await knownPedidos(
        deps.db,
        target.empresa_id,
        integracionId,
        stamps.map((s) => s.referencia),
      );
      for (const s of stamps) {
        const k = known.get(s.referencia);
        // What reconciliation would read; a delivery of it still waiting counts as behind too.
        if (!k || owed({ ...k, esperando: false }, s)) out.pedidos_pendientes.push(s.referencia);
      }
      // Only the listing: nothing is read whole nor stored by the check itself.
      return new Set<string>();
    },
    onPage: async () => undefined,
  });
}
