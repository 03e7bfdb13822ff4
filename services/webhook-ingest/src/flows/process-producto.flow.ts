import type { Transaction } from 'kysely';
import type { TenantContext } from '@erp/contracts';
import type { LockedEntrega } from '../db/entrega.repository';
import { lockMapeo, upsertMapeo } from '../db/mapeo.repository';
import type { WebhookDb } from '../db/tables';
import { Unprocessable } from '../domain/failures';
import { wooProductoIntent, type ProductoIntent } from '../domain/productos';
import { parseBody, type Outcome, type ProcessingDeps } from './process-pedido.flow';

/**
 * Applies a WooCommerce product delivery: finds our product (mapping, then SKU; an unknown SKU
 * creates it), sets its stock in the integration's warehouse (absolute, through the ledger, keyed
 * by the delivery so a replay moves nothing twice) unless the integration pushes our stock to the
 * shop, then name, price and enabled when they differ.
 */
export async function processProducto(trx: Transaction<WebhookDb>, entrega: LockedEntrega, deps: ProcessingDeps): Promise<Outcome> {
  const intent = wooProductoIntent(parseBody(entrega));
  if (!intent) throw new Unprocessable('El producto no trae id');
  const mapeo = await lockMapeo(trx, entrega.empresa_id, entrega.plataforma, intent.id_externo);
  if (mapeo?.version && intent.version && intent.version < mapeo.version) {
    return { estado: 'ignorada', motivo: 'Entrega desactualizada: ya se aplicó una versión más reciente del producto' };
  }
  const ctx = await deps.context(entrega.empresa_id, entrega.usuario_id, `webhook-${entrega.id}`);

  if (intent.eliminado) {
    if (!mapeo) return { estado: 'ignorada', motivo: 'Producto eliminado en la plataforma sin producto vinculado' };
    await deps.catalog.updateProducto(ctx, mapeo.producto_id, { enable: 0 });
    return { estado: 'procesada', motivo: 'Producto deshabilitado' };
  }

  const productoId = await applyProducto(ctx, entrega, intent, mapeo?.producto_id, deps);
  await upsertMapeo(trx, {
    empresa_id: entrega.empresa_id,
    plataforma: entrega.plataforma,
    id_externo: intent.id_externo,
    producto_id: productoId,
    version: intent.version,
  });
  return { estado: 'procesada' };
}

/**
 * Our product for the shop's, its stock set: the one mapped (else the one of its SKU) with name,
 * price and enabled brought up to date, or a new one of its SKU. Answers its id.
 */
async function applyProducto(
  ctx: TenantContext,
  entrega: LockedEntrega,
  intent: ProductoIntent,
  mapeado: number | undefined,
  deps: ProcessingDeps,
): Promise<number> {
  const query = mapeado !== undefined ? { id_producto: mapeado } : intent.sku ? { codigo: intent.sku } : undefined;
  if (!query) throw new Unprocessable('El producto no tiene SKU ni producto vinculado');
  const resolved = await deps.inventory.resolve(ctx, { items: [query] });
  const item = resolved.items[0];
  if (item?.ok) {
    const current = item.producto;
    const changes: { nombre?: string; precio?: string; enable?: 0 | 1 } = {};
    if (intent.nombre && intent.nombre !== current.nombre) changes.nombre = intent.nombre;
    if (intent.precio !== null && Number(intent.precio) !== Number(current.precio)) changes.precio = intent.precio;
    if ((intent.activo ? 1 : 0) !== current.enable) changes.enable = intent.activo ? 1 : 0;
    await applyStock(ctx, entrega, intent, current.id, deps);
    if (Object.keys(changes).length > 0) await deps.catalog.updateProducto(ctx, current.id, changes);
    return current.id;
  }
  if (!intent.sku) throw new Unprocessable('El producto vinculado ya no existe y el producto no trae SKU');
  const productoId = await deps.catalog.createProducto(ctx, {
    codigo: intent.sku,
    nombre: intent.nombre ?? intent.sku,
    precio: intent.precio ?? '0',
    enable: intent.activo ? 1 : 0,
  });
  await applyStock(ctx, entrega, intent, productoId, deps);
  return productoId;
}

async function applyStock(
  ctx: TenantContext,
  entrega: LockedEntrega,
  intent: ProductoIntent,
  productoId: number,
  deps: ProcessingDeps,
): Promise<void> {
  // A shop that shows our stock takes it from us: what it says of stock (our own write's echo
  // among it) changes nothing here.
  if (intent.stock === null || entrega.sincronizar_stock) return;
  await deps.inventory.adjust(ctx, {
    clave: `webhook-entrega-${entrega.id}`,
    origen: 'webhook',
    causa: { plataforma: entrega.plataforma },
    concepto: `Stock de WooCommerce (producto ${intent.id_externo})`,
    permitir_sin_stock: true,
    lineas: [{ id_producto: productoId, id_bodega: entrega.bodega_id, stock: intent.stock }],
  });
}
