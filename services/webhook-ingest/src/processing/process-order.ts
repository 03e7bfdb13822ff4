import { sql, type Transaction } from 'kysely';
import type { TenantContext } from '@erp/contracts';
import type { LockedEntrega } from '../db/entrega.repository';
import type { WebhookDb } from '../db/tables';
import { parseJsonExact } from '../domain/json';
import { UnprocessableOrder, decideOrder, orderIntent, type OrderIntent } from '../domain/orders';
import { Unprocessable, type CatalogPort, type InventoryPort, type SalesPort } from './ports';

export interface ProcessingDeps {
  sales: SalesPort;
  catalog: CatalogPort;
  inventory: InventoryPort;
  context(empresaId: number, usuarioId: number, requestId: string): Promise<TenantContext>;
}

export type Outcome = { estado: 'procesada' | 'ignorada'; motivo?: string | null; id_venta?: number | null };

export function parseBody(entrega: LockedEntrega): unknown {
  try {
    return parseJsonExact(entrega.cuerpo.toString('utf8'));
  } catch {
    throw new Unprocessable('El cuerpo de la entrega no es JSON válido');
  }
}

/**
 * Applies one order delivery. Runs inside the delivery's transaction with the order's row locked,
 * so deliveries of the same order apply one at a time and in a consistent order.
 */
export async function processOrder(trx: Transaction<WebhookDb>, entrega: LockedEntrega, deps: ProcessingDeps): Promise<Outcome> {
  let intent: OrderIntent;
  try {
    intent = orderIntent(entrega.plataforma, parseBody(entrega));
  } catch (err) {
    if (err instanceof UnprocessableOrder) throw new Unprocessable(err.message);
    throw err;
  }
  await trx
    .insertInto('pedidos')
    .values({ empresa_id: entrega.empresa_id, referencia: intent.referencia, estado_plataforma: null, version: null, id_venta: null })
    .onConflict((oc) => oc.columns(['empresa_id', 'referencia']).doNothing())
    .execute();
  const known = await trx
    .selectFrom('pedidos')
    .select(['version', 'id_venta', 'cancelado'])
    .where('empresa_id', '=', entrega.empresa_id)
    .where('referencia', '=', intent.referencia)
    .forUpdate()
    .executeTakeFirstOrThrow();

  const decision = decideOrder(intent, known);
  const remember = (changes: { id_venta?: number | null; cancelado?: boolean }) =>
    trx
      .updateTable('pedidos')
      .set({
        ...changes,
        estado_plataforma: intent.estado_plataforma,
        version: intent.version && (!known.version || intent.version > known.version) ? intent.version : known.version,
        updated_at: sql<Date>`now()`,
      })
      .where('empresa_id', '=', entrega.empresa_id)
      .where('referencia', '=', intent.referencia)
      .execute();

  switch (decision.kind) {
    case 'ignorar':
      return { estado: 'ignorada', motivo: decision.motivo };
    case 'ya-creada':
      await remember({});
      return { estado: 'procesada', id_venta: decision.id_venta, motivo: 'La venta del pedido ya existía' };
    case 'completar': {
      const ctx = await deps.context(entrega.empresa_id, entrega.usuario_id, `webhook-${entrega.id}`);
      const completed = await deps.sales.completeIfPending(ctx, decision.id_venta);
      await remember({});
      return { estado: 'procesada', id_venta: decision.id_venta, motivo: completed ? 'Venta pendiente completada: el pedido ya está pagado' : 'La venta del pedido ya existía' };
    }
    case 'anular': {
      const ctx = await deps.context(entrega.empresa_id, entrega.usuario_id, `webhook-${entrega.id}`);
      // A crash after sales.create and before we recorded its id leaves a sale we do not know of: ask sales.
      const idVenta = known.id_venta ?? (await deps.sales.saleByReference(ctx, intent.referencia));
      if (idVenta === null) {
        await remember({ cancelado: true });
        return { estado: 'ignorada', motivo: 'El pedido se canceló antes de generar una venta' };
      }
      await deps.sales.annulSale(ctx, idVenta);
      await remember({ cancelado: true, id_venta: idVenta });
      return { estado: 'procesada', id_venta: idVenta, motivo: 'Venta anulada' };
    }
    case 'crear': {
      if (entrega.documento_id === null) throw new Unprocessable('La integración no tiene documento de venta configurado');
      if (intent.lineas.length === 0) throw new Unprocessable('El pedido no tiene líneas');
      const ctx = await deps.context(entrega.empresa_id, entrega.usuario_id, `webhook-${entrega.id}`);
      const productos = await matchProducts(trx, entrega, intent, ctx, deps.inventory);
      let idCliente: number | undefined;
      if (intent.cliente.email) {
        idCliente = await deps.sales.findOrCreateCustomer(ctx, { email: intent.cliente.email, nombre: intent.cliente.nombre });
      } else if (decision.estado === 'Pendiente') {
        throw new Unprocessable('Un pedido pendiente necesita el email del cliente');
      }
      const sale = await deps.sales.createSale(ctx, {
        referencia_externa: intent.referencia,
        fecha: intent.fecha,
        estado: decision.estado,
        id_sucursal: entrega.sucursal_id,
        id_bodega: entrega.bodega_id,
        id_documento: entrega.documento_id,
        ...(entrega.canal_id !== null ? { id_canal: entrega.canal_id } : {}),
        ...(idCliente !== undefined ? { id_cliente: idCliente } : {}),
        ...(intent.forma_pago ? { forma_pago: intent.forma_pago } : {}),
        observaciones: `Pedido ${intent.referencia} (${entrega.plataforma})`,
        permitir_sin_stock: true,
        origen: entrega.plataforma,
        detalles: intent.lineas.map((l, i) => ({ id_producto: productos[i]!, cantidad: l.cantidad, precio: l.precio, descuento: l.descuento })),
      });
      await remember({ id_venta: sale.id });
      return { estado: 'procesada', id_venta: sale.id, motivo: sale.idempotent ? 'La venta del pedido ya existía' : null };
    }
  }
}

/**
 * Our product for each line: by a stored mapping of the platform's variant or product id, else by
 * SKU (`codigo`, then `barcode`), remembering the mapping it found. Any line without a product
 * makes the whole order unprocessable, listing every such line.
 */
async function matchProducts(
  trx: Transaction<WebhookDb>,
  entrega: LockedEntrega,
  intent: OrderIntent,
  ctx: TenantContext,
  inventory: InventoryPort,
): Promise<number[]> {
  const allIds = [...new Set(intent.lineas.flatMap((l) => l.ids_externos))];
  const mapped = new Map<string, number>();
  if (allIds.length > 0) {
    const rows = await trx
      .selectFrom('mapeos_producto')
      .select(['id_externo', 'producto_id'])
      .where('empresa_id', '=', entrega.empresa_id)
      .where('plataforma', '=', entrega.plataforma)
      .where('id_externo', 'in', allIds)
      .execute();
    for (const r of rows) mapped.set(r.id_externo, r.producto_id);
  }
  const result: Array<number | undefined> = intent.lineas.map((l) => l.ids_externos.map((id) => mapped.get(id)).find((v) => v !== undefined));
  const bySku = intent.lineas.map((l, i) => ({ i, sku: l.sku })).filter((x): x is { i: number; sku: string } => result[x.i] === undefined && x.sku !== null);
  const problems: string[] = [];
  if (bySku.length > 0) {
    const reply = await inventory.resolve(ctx, { items: bySku.map((x) => ({ codigo: x.sku })) });
    for (const [k, { i }] of bySku.entries()) {
      const item = reply.items[k];
      if (item?.ok) {
        result[i] = item.producto.id;
        const externalId = intent.lineas[i]!.ids_externos[0];
        if (externalId) {
          await trx
            .insertInto('mapeos_producto')
            .values({ empresa_id: entrega.empresa_id, plataforma: entrega.plataforma, id_externo: externalId, producto_id: item.producto.id, version: null })
            .onConflict((oc) => oc.columns(['empresa_id', 'plataforma', 'id_externo']).doUpdateSet({ producto_id: item.producto.id, updated_at: sql<Date>`now()` }))
            .execute();
        }
      } else if (item) problems.push(`"${intent.lineas[i]!.nombre}" (SKU ${bySku[k]!.sku}): ${item.message}`);
    }
  }
  intent.lineas.forEach((l, i) => {
    if (result[i] === undefined && l.sku === null) problems.push(`"${l.nombre}" (id ${l.ids_externos.join('/') || '?'}): sin SKU y sin producto vinculado`);
  });
  if (problems.length > 0) throw new Unprocessable(`Producto no encontrado: ${problems.join('; ')}`);
  return result as number[];
}
