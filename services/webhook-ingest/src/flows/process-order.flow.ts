import type { Transaction } from 'kysely';
import { AppError, cents, type TenantContext } from '@erp/contracts';
import type { LockedEntrega } from '../db/entrega.repository';
import { setProductoEnvio } from '../db/integracion.repository';
import { findMapeos, upsertMapeo } from '../db/mapeo.repository';
import { lockPedido, type PedidoRow, type PedidoUpdate } from '../db/pedido.repository';
import type { WebhookDb } from '../db/tables';
import { parseJsonExact } from '../domain/json';
import { quantityFixed } from '../domain/money';
import {
  UnprocessableOrder,
  decideOrder,
  orderIntent,
  planOrderSale,
  shopifyRefundIntent,
  type ProductLine,
  type RefundIntent,
} from '../domain/orders';
import { Unprocessable } from '../domain/failures';
import type { CatalogPort, InventoryPort } from '../ports/inventory.port';
import type { ReturnsPort } from '../ports/returns.port';
import type { SalesPort } from '../ports/sales.port';

export interface ProcessingDeps {
  sales: SalesPort;
  catalog: CatalogPort;
  inventory: InventoryPort;
  returns: ReturnsPort;
  context(empresaId: number, usuarioId: number, requestId: string): Promise<TenantContext>;
}

/** How a delivery ended, and the changes to its order's row that finishing it writes. */
export type Outcome = { estado: 'procesada' | 'ignorada'; motivo?: string | null; id_venta?: number | null; pedido?: PedidoUpdate };

/** The code of the service product a company's platform shipping and fees are sold as, when its integration names none. */
export const CODIGO_ENVIO = 'ENVIO';

/** Returns answers this when nothing of the sale is left to return. */
const NOTHING_LEFT = 'La venta ya fue devuelta por completo';

export function parseBody(entrega: LockedEntrega): unknown {
  try {
    return parseJsonExact(entrega.cuerpo.toString('utf8'));
  } catch {
    throw new Unprocessable('El cuerpo de la entrega no es JSON válido');
  }
}

/** What a delivery records on its order's row when it is the order's first. */
const firstPath = (entrega: LockedEntrega) => ({ origen: entrega.origen, integracion_id: entrega.integracion_id });

const intentOf = <T>(read: () => T): T => {
  try {
    return read();
  } catch (err) {
    if (err instanceof UnprocessableOrder) throw new Unprocessable(err.message);
    throw err;
  }
};

/**
 * Applies one order delivery. Runs inside the delivery's transaction with the order's row locked,
 * so deliveries of the same order apply one at a time and in a consistent order.
 */
export async function processOrder(trx: Transaction<WebhookDb>, entrega: LockedEntrega, deps: ProcessingDeps): Promise<Outcome> {
  if (entrega.tema === 'refunds/create') return processRefund(trx, entrega, deps);
  const intent = intentOf(() => orderIntent(entrega.plataforma, parseBody(entrega)));
  const known = await lockPedido(trx, entrega.empresa_id, intent.referencia, firstPath(entrega));
  const decision = decideOrder(intent, known);
  const remember = (changes: {
    id_venta?: number | null;
    cancelado?: boolean;
    lineas?: Array<string | null>;
    reembolsos?: string[];
    lineas_pendientes?: boolean;
  }): PedidoUpdate => ({
    empresa_id: entrega.empresa_id,
    referencia: intent.referencia,
    changes: {
      ...changes,
      estado_plataforma: intent.estado_plataforma,
      version: intent.version && (!known.version || intent.version > known.version) ? intent.version : known.version,
    },
  });
  const context = () => deps.context(entrega.empresa_id, entrega.usuario_id, `webhook-${entrega.id}`);

  switch (decision.kind) {
    case 'ignorar':
      return { estado: 'ignorada', motivo: decision.motivo };
    case 'ya-creada':
    case 'completar': {
      const ctx = await context();
      // Completing reads the sale: its line ids serve the refunds, which need not read it again.
      const completion = decision.kind === 'completar' ? await deps.sales.completeIfPending(ctx, decision.id_venta) : undefined;
      const completed = completion?.completed ?? false;
      const refunds = await applyRefunds(
        ctx,
        intent.referencia,
        { ...known, id_venta: decision.id_venta },
        intent.reembolsos,
        deps,
        linesToCome(entrega),
        completion?.lineIds,
      );
      const motivo = [
        completed ? 'Venta pendiente completada: el pedido ya está pagado' : 'La venta del pedido ya existía',
        ...refunds.notas,
      ].join('. ');
      return {
        estado: 'procesada',
        id_venta: decision.id_venta,
        motivo,
        pedido: remember({ reembolsos: refunds.aplicados, lineas_pendientes: refunds.esperando }),
      };
    }
    case 'anular': {
      const ctx = await context();
      // A crash after sales.create and before we recorded its id leaves a sale we do not know of: ask sales.
      const idVenta = known.id_venta ?? (await deps.sales.saleByReference(ctx, intent.referencia));
      if (idVenta === null) {
        return { estado: 'ignorada', motivo: 'El pedido se canceló antes de generar una venta', pedido: remember({ cancelado: true }) };
      }
      if (known.reembolsos.length > 0) {
        // Refunds already returned part of the sale, and a sale with returns cannot be annulled:
        // what is left comes back as one more return.
        const motivo = await returnTheRest(ctx, intent.referencia, idVenta, deps);
        return { estado: 'procesada', id_venta: idVenta, motivo, pedido: remember({ cancelado: true, id_venta: idVenta }) };
      }
      await deps.sales.annulSale(ctx, idVenta);
      return { estado: 'procesada', id_venta: idVenta, motivo: 'Venta anulada', pedido: remember({ cancelado: true, id_venta: idVenta }) };
    }
    case 'crear': {
      if (entrega.documento_id === null) throw new Unprocessable('La integración no tiene documento de venta configurado');
      if (intent.productos.length === 0) throw new Unprocessable('El pedido no tiene líneas');
      const plan = intentOf(() => planOrderSale(intent));
      const ctx = await context();
      const productos = await matchProducts(trx, entrega, intent.productos, ctx, deps.inventory);
      const servicio = plan.lineas.some((l) => 'servicio' in l.origen) ? await serviceProduct(trx, entrega, ctx, deps) : null;
      let idCliente: number | undefined;
      if (intent.cliente.email) {
        idCliente = await deps.sales.findOrCreateCustomer(ctx, { email: intent.cliente.email, nombre: intent.cliente.nombre });
      } else if (decision.estado === 'Pendiente') {
        throw new Unprocessable('Un pedido pendiente necesita el email del cliente');
      }
      const servicios = plan.lineas.flatMap((l) => ('servicio' in l.origen ? [l.origen.servicio] : []));
      const observaciones = [
        `Pedido ${intent.referencia} (${entrega.plataforma})`,
        ...(servicios.length > 0 ? [`Servicios: ${servicios.join(', ')}`] : []),
        ...plan.notas,
      ]
        .join('. ')
        .slice(0, 1000);
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
        observaciones,
        permitir_sin_stock: true,
        origen: entrega.plataforma,
        detalles: plan.lineas.map((l) => ({
          id_producto: 'producto' in l.origen ? productos[l.origen.producto]! : servicio!,
          cantidad: l.cantidad,
          precio: l.precio,
          descuento: l.descuento,
        })),
      });
      // Product lines come first in the sale, in the order's order: refunds find them by position.
      const lineas = intent.productos.map((p) => p.id_linea);
      const refunds = await applyRefunds(
        ctx,
        intent.referencia,
        { ...known, id_venta: sale.id, lineas },
        intent.reembolsos,
        deps,
        linesToCome(entrega),
      );
      const motivo = [...(sale.idempotent ? ['La venta del pedido ya existía'] : []), ...refunds.notas].join('. ');
      return {
        estado: 'procesada',
        id_venta: sale.id,
        motivo: motivo || null,
        pedido: remember({ id_venta: sale.id, lineas, reembolsos: refunds.aplicados, lineas_pendientes: refunds.esperando }),
      };
    }
  }
}

/** A Shopify `refunds/create` delivery: the refund of an order whose sale we made. */
async function processRefund(trx: Transaction<WebhookDb>, entrega: LockedEntrega, deps: ProcessingDeps): Promise<Outcome> {
  const body = parseBody(entrega) as Record<string, unknown> | null;
  const refund = shopifyRefundIntent(body);
  if (!refund || !entrega.referencia) throw new Unprocessable('El reembolso no trae id o no indica su pedido (order_id)');
  const known = await lockPedido(trx, entrega.empresa_id, entrega.referencia, firstPath(entrega));
  if (known.cancelado) return { estado: 'ignorada', motivo: 'El pedido ya fue cancelado: su venta ya no tiene qué devolver' };
  const ctx = await deps.context(entrega.empresa_id, entrega.usuario_id, `webhook-${entrega.id}`);
  const idVenta = known.id_venta ?? (await deps.sales.saleByReference(ctx, entrega.referencia));
  // The order's own delivery may still be on its way: retried until it has made the sale.
  if (idVenta === null)
    throw new AppError('UNAVAILABLE', `El pedido ${entrega.referencia} aún no tiene venta; el reembolso se reintentará`);
  const refunds = await applyRefunds(ctx, entrega.referencia, { ...known, id_venta: idVenta }, [refund], deps, false);
  return {
    estado: 'procesada',
    id_venta: idVenta,
    motivo: refunds.notas.join('. ') || null,
    pedido: {
      empresa_id: entrega.empresa_id,
      referencia: entrega.referencia,
      changes: { id_venta: idVenta, reembolsos: refunds.aplicados },
    },
  };
}

/**
 * Whether a refund without lines in this delivery will get them later: a WooCommerce order's
 * webhook carries only each refund's amount, and an integration with the shop's API reads the
 * refund whole (`/orders/{id}/refunds`) by reconciliation. Read by reconciliation, or without
 * the shop's API, a refund without lines has none.
 */
const linesToCome = (entrega: LockedEntrega): boolean =>
  entrega.plataforma === 'woocommerce' && entrega.origen === 'webhook' && entrega.tienda_url !== null;

/**
 * Books each refund not booked yet as returns of the sale: the restocked lines as a `devolucion`
 * (stock back), the others as a `descuento_ajuste` (money only). Each return's reference is
 * derived from the refund's id, so a crash between the return and our record of it, or the same
 * refund arriving in a `refunds/create` and again inside the order, still makes one return. A
 * refund without lines whose lines are to come (`awaitLines`) is left for then (`esperando`).
 */
async function applyRefunds(
  ctx: TenantContext,
  referencia: string,
  pedido: Pick<PedidoRow, 'lineas' | 'reembolsos'> & { id_venta: number },
  refunds: RefundIntent[],
  deps: ProcessingDeps,
  awaitLines: boolean,
  /** The sale's line ids when the caller has just read them. */
  knownLineIds?: number[],
): Promise<{ aplicados: string[]; notas: string[]; esperando: boolean }> {
  const aplicados = [...pedido.reembolsos];
  const notas: string[] = [];
  let esperando = false;
  const pending = refunds.filter((r) => !aplicados.includes(r.id));
  if (pending.length === 0) return { aplicados, notas, esperando };
  const saleLines = knownLineIds ?? (await deps.sales.saleLineIds(ctx, pedido.id_venta));
  for (const refund of pending) {
    if (refund.lineas.length === 0 && awaitLines) {
      notas.push(`Reembolso ${refund.id} de ${cents(refund.monto)} sin líneas en el webhook: sus líneas llegan con la conciliación`);
      esperando = true;
      continue;
    }
    if (refund.lineas.length === 0) {
      notas.push(`Reembolso ${refund.id} de ${cents(refund.monto)} sin líneas: no mueve stock ni genera devolución`);
      aplicados.push(refund.id);
      continue;
    }
    const detalle = (idLinea: string) => {
      const position = pedido.lineas.indexOf(idLinea);
      const id = position >= 0 ? saleLines[position] : undefined;
      if (id === undefined)
        throw new Unprocessable(`El reembolso ${refund.id} nombra la línea ${idLinea}, que no está en la venta del pedido`);
      return id;
    };
    for (const [tipo, reponer, sufijo] of [
      ['devolucion', true, ''],
      ['descuento_ajuste', false, '-sin-reposicion'],
    ] as const) {
      const lineas = refund.lineas.filter((l) => l.reponer === reponer);
      if (lineas.length === 0) continue;
      const devolucion = await deps.returns.createReturn(ctx, {
        id_venta: pedido.id_venta,
        fecha: new Date().toISOString().slice(0, 10),
        tipo,
        referencia: `${referencia}-reembolso-${refund.id}${sufijo}`,
        observaciones: `Reembolso ${refund.id} del pedido ${referencia} (${cents(refund.monto)} reembolsado por la plataforma)`,
        detalles: lineas.map((l) => ({ id_detalle: detalle(l.id_linea), cantidad: quantityFixed(l.cantidad) })),
      });
      notas.push(
        `Reembolso ${refund.id}: devolución ${devolucion.id} por ${devolucion.total}${reponer ? ' con reposición de stock' : ' sin reposición de stock'}`,
      );
    }
    aplicados.push(refund.id);
  }
  return { aplicados, notas, esperando };
}

/** A cancelled or fully refunded order whose sale already has returns: the rest of the sale is returned. */
async function returnTheRest(ctx: TenantContext, referencia: string, idVenta: number, deps: ProcessingDeps): Promise<string> {
  try {
    const devolucion = await deps.returns.createReturn(ctx, {
      id_venta: idVenta,
      fecha: new Date().toISOString().slice(0, 10),
      tipo: 'anulacion_factura',
      referencia: `${referencia}-anulacion`,
      observaciones: `Pedido ${referencia} cancelado o reembolsado por completo`,
      detalles: [],
    });
    return `Pedido cancelado con devoluciones previas: devolución ${devolucion.id} por lo que quedaba de la venta`;
  } catch (err) {
    if (err instanceof AppError && err.code === 'BUSINESS_RULE' && err.message === NOTHING_LEFT)
      return 'Pedido cancelado: los reembolsos ya devolvieron toda la venta';
    throw err;
  }
}

/**
 * The service product shipping, fees and adjustments are sold as: the integration's, else the
 * company's `ENVIO` (created as a `Servicio` the first time, so it never moves stock), which the
 * integration then remembers.
 */
async function serviceProduct(
  trx: Transaction<WebhookDb>,
  entrega: LockedEntrega,
  ctx: TenantContext,
  deps: ProcessingDeps,
): Promise<number> {
  const query = entrega.producto_envio_id !== null ? { id_producto: entrega.producto_envio_id } : { codigo: CODIGO_ENVIO };
  const [item] = (await deps.inventory.resolve(ctx, { items: [query] })).items;
  let id: number;
  if (item?.ok) {
    if (item.producto.tipo !== 'Servicio') {
      throw new Unprocessable(`El producto ${item.producto.codigo} de envíos y cargos no es un Servicio: movería stock`);
    }
    id = item.producto.id;
  } else if (entrega.producto_envio_id !== null) {
    throw new Unprocessable(`El producto de envíos y cargos de la integración (id ${entrega.producto_envio_id}) no existe`);
  } else {
    id = await deps.catalog.createProduct(ctx, {
      codigo: CODIGO_ENVIO,
      nombre: 'Envío y cargos de pedidos en línea',
      precio: '0',
      enable: 1,
      tipo: 'Servicio',
    });
  }
  if (entrega.producto_envio_id !== id) await setProductoEnvio(trx, entrega.integracion_id, id);
  return id;
}

/** The platform id whose stored mapping serves a line: its variant's, or its product's when it has no variant. */
const mappingKey = (l: ProductLine): string | null => l.id_variante ?? l.id_producto_externo;

/**
 * Our product for each line. A SKU that names one of our products (`codigo`, then `barcode`)
 * decides, whatever was mapped before, and the line's mapping follows it; a line without a usable
 * SKU takes the stored mapping of its most specific platform id. A mapping is not written when
 * lines of one order with that id name different products (a product's lines told apart only by
 * SKU). Any line without a product makes the whole order unprocessable, listing every such line.
 */
async function matchProducts(
  trx: Transaction<WebhookDb>,
  entrega: LockedEntrega,
  lines: ProductLine[],
  ctx: TenantContext,
  inventory: InventoryPort,
): Promise<number[]> {
  const result: Array<number | undefined> = lines.map(() => undefined);
  const withSku = lines.flatMap((l, i) => (l.sku !== null ? [{ i, sku: l.sku }] : []));
  const skuProblems = new Map<number, string>();
  if (withSku.length > 0) {
    const reply = await inventory.resolve(ctx, { items: withSku.map((x) => ({ codigo: x.sku })) });
    withSku.forEach(({ i }, k) => {
      const item = reply.items[k];
      if (item?.ok) result[i] = item.producto.id;
      else if (item) skuProblems.set(i, item.message);
    });
  }
  const keys = [...new Set(lines.flatMap((l) => (mappingKey(l) !== null ? [mappingKey(l)!] : [])))];
  const mapped = await findMapeos(trx, entrega.empresa_id, entrega.plataforma, keys);
  lines.forEach((l, i) => {
    const key = mappingKey(l);
    if (result[i] === undefined && key !== null) result[i] = mapped.get(key);
  });

  const problems = lines.flatMap((l, i) => {
    if (result[i] !== undefined) return [];
    const ids = [l.id_variante, l.id_producto_externo].filter(Boolean).join('/') || '?';
    return [
      l.sku !== null
        ? `"${l.nombre}" (SKU ${l.sku}): ${skuProblems.get(i) ?? 'no encontrado'}`
        : `"${l.nombre}" (id ${ids}): sin SKU y sin producto vinculado`,
    ];
  });
  if (problems.length > 0) throw new Unprocessable(`Producto no encontrado: ${problems.join('; ')}`);

  const byKey = new Map<string, Set<number>>();
  lines.forEach((l, i) => {
    const key = mappingKey(l);
    if (key !== null && l.sku !== null && !skuProblems.has(i)) byKey.set(key, (byKey.get(key) ?? new Set()).add(result[i]!));
  });
  for (const [key, productos] of byKey) {
    if (productos.size !== 1) continue;
    const [productoId] = productos;
    if (mapped.get(key) === productoId) continue;
    await upsertMapeo(trx, { empresa_id: entrega.empresa_id, plataforma: entrega.plataforma, id_externo: key, producto_id: productoId! });
  }
  return result as number[];
}
