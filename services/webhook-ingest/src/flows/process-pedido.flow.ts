import type { Transaction } from 'kysely';
import { AppError, cents, type TenantContext } from '@erp/contracts';
import type { LockedEntrega } from '../db/entrega.repository';
import { lockPedido, type PedidoRow, type PedidoUpdate } from '../db/pedido.repository';
import type { WebhookDb } from '../db/tables';
import { parseJsonExact } from '../domain/json';
import { quantityFixed } from '../domain/money';
import {
  decidePedido,
  pedidoIntent,
  shopifyReembolsoIntent,
  type PedidoDecision,
  type PedidoIntent,
  type ReembolsoIntent,
} from '../domain/pedidos';
import { Unprocessable } from '../domain/failures';
import type { ReturnsPort } from '../ports/returns.port';
import { intentOf, makePedidoVentas, type MadeVenta, type NuevoPedido, type PedidoVentaDeps } from './pedido-ventas.flow';

export interface ProcessingDeps extends PedidoVentaDeps {
  returns: ReturnsPort;
}

/** How a delivery ended, and the changes to its order's row that finishing it writes. */
export type Outcome = { estado: 'procesada' | 'ignorada'; motivo?: string | null; id_venta?: number | null; pedido?: PedidoUpdate };

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

/** The context of the calls a delivery makes, its request named after it. */
const contextOf = (entrega: LockedEntrega, deps: ProcessingDeps) =>
  deps.context(entrega.empresa_id, entrega.usuario_id, `webhook-${entrega.id}`);

/** An order delivery being applied: the delivery, what its order asks, and what we applied of that order before. */
interface Applying {
  entrega: LockedEntrega;
  intent: PedidoIntent;
  known: PedidoRow;
}

/**
 * Applies one order delivery. Runs inside the delivery's transaction with the order's row locked,
 * so deliveries of the same order apply one at a time and in a consistent order.
 */
export async function processPedido(trx: Transaction<WebhookDb>, entrega: LockedEntrega, deps: ProcessingDeps): Promise<Outcome> {
  if (entrega.tema === 'refunds/create') return processReembolso(trx, entrega, deps);
  const intent = intentOf(() => pedidoIntent(entrega.plataforma, parseBody(entrega)));
  const known = await lockPedido(trx, entrega.empresa_id, intent.referencia, firstPath(entrega));
  const decision = decidePedido(intent, known);
  switch (decision.kind) {
    case 'ignorar':
      return { estado: 'ignorada', motivo: decision.motivo };
    case 'ya-creada':
    case 'completar':
      return answerKnown({ entrega, intent, known }, decision, deps);
    case 'anular':
      return annulVenta({ entrega, intent, known }, deps);
    case 'crear':
      return makeVenta(trx, { entrega, intent, known }, decision.estado, deps);
  }
}

/** An order whose sale we made: a sale still pending is completed when the order is paid, and the order's new refunds are booked. */
async function answerKnown(
  { entrega, intent, known }: Applying,
  decision: Extract<PedidoDecision, { kind: 'ya-creada' | 'completar' }>,
  deps: ProcessingDeps,
): Promise<Outcome> {
  const ctx = await contextOf(entrega, deps);
  // Completing reads the sale: its line ids serve the refunds, which need not read it again.
  const completion = decision.kind === 'completar' ? await deps.sales.completeIfPending(ctx, decision.id_venta) : undefined;
  const completed = completion?.completed ?? false;
  const reembolsos = await applyReembolsos(
    ctx,
    intent.referencia,
    { ...known, id_venta: decision.id_venta },
    intent.reembolsos,
    deps,
    lineasToCome(entrega),
    completion?.lineIds,
  );
  const motivo = [
    completed ? 'Venta pendiente completada: el pedido ya está pagado' : 'La venta del pedido ya existía',
    ...reembolsos.notas,
  ].join('. ');
  return {
    estado: 'procesada',
    id_venta: decision.id_venta,
    motivo,
    pedido: pedidoUpdate(entrega, intent, known, { reembolsos: reembolsos.aplicados, lineas_pendientes: reembolsos.esperando }),
  };
}

/** A cancelled order: its sale, if one was made, is annulled. */
async function annulVenta({ entrega, intent, known }: Applying, deps: ProcessingDeps): Promise<Outcome> {
  const ctx = await contextOf(entrega, deps);
  // A crash after sales.create and before we recorded its id leaves a sale we do not know of: ask sales.
  const idVenta = known.id_venta ?? (await deps.sales.ventaByReferencia(ctx, intent.referencia));
  if (idVenta === null) {
    return {
      estado: 'ignorada',
      motivo: 'El pedido se canceló antes de generar una venta',
      pedido: pedidoUpdate(entrega, intent, known, { cancelado: true }),
    };
  }
  const pedido = pedidoUpdate(entrega, intent, known, { cancelado: true, id_venta: idVenta });
  if (known.reembolsos.length > 0) {
    // Refunds already returned part of the sale, and a sale with returns cannot be annulled:
    // what is left comes back as one more return.
    const motivo = await returnTheRest(ctx, intent.referencia, idVenta, deps);
    return { estado: 'procesada', id_venta: idVenta, motivo, pedido };
  }
  await deps.sales.annulVenta(ctx, idVenta);
  return { estado: 'procesada', id_venta: idVenta, motivo: 'Venta anulada', pedido };
}

/** A new order: its sale is made alone, by the pipeline a group's sales take. */
async function makeVenta(
  trx: Transaction<WebhookDb>,
  pedido: Applying,
  estado: NuevoPedido['estado'],
  deps: ProcessingDeps,
): Promise<Outcome> {
  const [made] = await makePedidoVentas(
    trx,
    [{ entrega: pedido.entrega, intent: pedido.intent, estado }],
    deps,
    `webhook-${pedido.entrega.id}`,
  );
  if (made instanceof Error) throw made;
  return ventaMade(pedido.entrega, pedido.intent, pedido.known, made!, deps);
}

/**
 * The delivery's outcome once its order's sale is made: the refunds the order already carries are
 * booked against it, and the order's row records the sale and its lines.
 */
export async function ventaMade(
  entrega: LockedEntrega,
  intent: PedidoIntent,
  known: PedidoRow,
  venta: MadeVenta,
  deps: ProcessingDeps,
): Promise<Outcome> {
  // Product lines come first in the sale, in the order's order: refunds find them by position.
  const lineas = intent.productos.map((p) => p.id_linea);
  const reembolsos =
    intent.reembolsos.length > 0
      ? await applyReembolsos(
          await contextOf(entrega, deps),
          intent.referencia,
          { ...known, id_venta: venta.id, lineas },
          intent.reembolsos,
          deps,
          lineasToCome(entrega),
        )
      : { aplicados: known.reembolsos, notas: [], esperando: false };
  const motivo = [...(venta.idempotent ? ['La venta del pedido ya existía'] : []), ...reembolsos.notas].join('. ');
  return {
    estado: 'procesada',
    id_venta: venta.id,
    motivo: motivo || null,
    pedido: pedidoUpdate(entrega, intent, known, {
      id_venta: venta.id,
      lineas,
      reembolsos: reembolsos.aplicados,
      lineas_pendientes: reembolsos.esperando,
    }),
  };
}

/** The changes a delivery makes to its order's row: `changes`, the platform's state, and the newer version. */
function pedidoUpdate(entrega: LockedEntrega, intent: PedidoIntent, known: PedidoRow, changes: PedidoUpdate['changes']): PedidoUpdate {
  return {
    empresa_id: entrega.empresa_id,
    referencia: intent.referencia,
    changes: {
      ...changes,
      estado_plataforma: intent.estado_plataforma,
      version: intent.version && (!known.version || intent.version > known.version) ? intent.version : known.version,
    },
  };
}

/** A Shopify `refunds/create` delivery: the refund of an order whose sale we made. */
async function processReembolso(trx: Transaction<WebhookDb>, entrega: LockedEntrega, deps: ProcessingDeps): Promise<Outcome> {
  const body = parseBody(entrega) as Record<string, unknown> | null;
  const reembolso = shopifyReembolsoIntent(body);
  if (!reembolso || !entrega.referencia) throw new Unprocessable('El reembolso no trae id o no indica su pedido (order_id)');
  const known = await lockPedido(trx, entrega.empresa_id, entrega.referencia, firstPath(entrega));
  if (known.cancelado) return { estado: 'ignorada', motivo: 'El pedido ya fue cancelado: su venta ya no tiene qué devolver' };
  const ctx = await contextOf(entrega, deps);
  const idVenta = known.id_venta ?? (await deps.sales.ventaByReferencia(ctx, entrega.referencia));
  // The order's own delivery may still be on its way: retried until it has made the sale.
  if (idVenta === null)
    throw new AppError('UNAVAILABLE', `El pedido ${entrega.referencia} aún no tiene venta; el reembolso se reintentará`);
  const reembolsos = await applyReembolsos(ctx, entrega.referencia, { ...known, id_venta: idVenta }, [reembolso], deps, false);
  return {
    estado: 'procesada',
    id_venta: idVenta,
    motivo: reembolsos.notas.join('. ') || null,
    pedido: {
      empresa_id: entrega.empresa_id,
      referencia: entrega.referencia,
      changes: { id_venta: idVenta, reembolsos: reembolsos.aplicados },
    },
  };
}

/**
 * Whether a refund without lines in this delivery will get them later: a WooCommerce order's
 * webhook carries only each refund's amount, and an integration with the shop's API reads the
 * refund whole (`/orders/{id}/refunds`) by reconciliation. Read by reconciliation, or without
 * the shop's API, a refund without lines has none.
 */
const lineasToCome = (entrega: LockedEntrega): boolean =>
  entrega.plataforma === 'woocommerce' && entrega.origen === 'webhook' && entrega.tienda_url !== null;

/**
 * Books each refund not booked yet as returns of the sale: the restocked lines as a `devolucion`
 * (stock back), the others as a `descuento_ajuste` (money only). Each return's reference is
 * derived from the refund's id, so a crash between the return and our record of it, or the same
 * refund arriving in a `refunds/create` and again inside the order, still makes one return. A
 * refund without lines whose lines are to come (`awaitLines`) is left for then (`esperando`).
 */
async function applyReembolsos(
  ctx: TenantContext,
  referencia: string,
  pedido: Pick<PedidoRow, 'lineas' | 'reembolsos'> & { id_venta: number },
  reembolsos: ReembolsoIntent[],
  deps: ProcessingDeps,
  awaitLineas: boolean,
  /** The sale's line ids when the caller has just read them. */
  knownDetalleIds?: number[],
): Promise<{ aplicados: string[]; notas: string[]; esperando: boolean }> {
  const aplicados = [...pedido.reembolsos];
  const notas: string[] = [];
  let esperando = false;
  const pending = reembolsos.filter((r) => !aplicados.includes(r.id));
  if (pending.length === 0) return { aplicados, notas, esperando };
  const idsDetalle = knownDetalleIds ?? (await deps.sales.ventaLineIds(ctx, pedido.id_venta));
  for (const reembolso of pending) {
    if (reembolso.lineas.length === 0 && awaitLineas) {
      notas.push(`Reembolso ${reembolso.id} de ${cents(reembolso.monto)} sin líneas en el webhook: sus líneas llegan con la conciliación`);
      esperando = true;
      continue;
    }
    if (reembolso.lineas.length === 0)
      notas.push(`Reembolso ${reembolso.id} de ${cents(reembolso.monto)} sin líneas: no mueve stock ni genera devolución`);
    else notas.push(...(await bookReembolso(ctx, referencia, { ...pedido, idsDetalle }, reembolso, deps)));
    aplicados.push(reembolso.id);
  }
  return { aplicados, notas, esperando };
}

/** Books the lines of one refund as returns of the sale, one per kind (restocked or not); answers a note of each. */
async function bookReembolso(
  ctx: TenantContext,
  referencia: string,
  pedido: Pick<PedidoRow, 'lineas'> & { id_venta: number; idsDetalle: number[] },
  reembolso: ReembolsoIntent,
  deps: ProcessingDeps,
): Promise<string[]> {
  const detalle = (idLinea: string) => {
    const position = pedido.lineas.indexOf(idLinea);
    const id = position >= 0 ? pedido.idsDetalle[position] : undefined;
    if (id === undefined)
      throw new Unprocessable(`El reembolso ${reembolso.id} nombra la línea ${idLinea}, que no está en la venta del pedido`);
    return id;
  };
  const notas: string[] = [];
  for (const [tipo, reponer, sufijo] of [
    ['devolucion', true, ''],
    ['descuento_ajuste', false, '-sin-reposicion'],
  ] as const) {
    const lineas = reembolso.lineas.filter((l) => l.reponer === reponer);
    if (lineas.length === 0) continue;
    const devolucion = await deps.returns.createDevolucion(ctx, {
      id_venta: pedido.id_venta,
      fecha: new Date().toISOString().slice(0, 10),
      tipo,
      referencia: `${referencia}-reembolso-${reembolso.id}${sufijo}`,
      observaciones: `Reembolso ${reembolso.id} del pedido ${referencia} (${cents(reembolso.monto)} reembolsado por la plataforma)`,
      detalles: lineas.map((l) => ({ id_detalle: detalle(l.id_linea), cantidad: quantityFixed(l.cantidad) })),
    });
    notas.push(
      `Reembolso ${reembolso.id}: devolución ${devolucion.id} por ${devolucion.total}${reponer ? ' con reposición de stock' : ' sin reposición de stock'}`,
    );
  }
  return notas;
}

/** A cancelled or fully refunded order whose sale already has returns: the rest of the sale is returned. */
async function returnTheRest(ctx: TenantContext, referencia: string, idVenta: number, deps: ProcessingDeps): Promise<string> {
  try {
    const devolucion = await deps.returns.createDevolucion(ctx, {
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
