import type { Kysely, Transaction } from 'kysely';
import { inTransaction } from '@erp/db';
import { finishEntrega, lockEntregas, type LockedEntrega } from '../db/entrega.repository';
import { lockPedidos } from '../db/pedido.repository';
import type { WebhookDb } from '../db/tables';
import { decidePedido, pedidoIntent, type PedidoIntent } from '../domain/pedidos';
import type { ProcessResult } from './process-entrega.flow';
import { makePedidoVentas, type NuevoPedido } from './pedido-ventas.flow';
import { parseBody, ventaMade, type ProcessingDeps } from './process-pedido.flow';

/**
 * Processes order deliveries of one integration together, in one transaction: each delivery
 * locked and taken only while `recibida`, each order's row locked (in reference order), and the
 * sales of the new orders made by one `sales.batch.create`. Answers the outcome of each delivery
 * it finished; the others (an order already known, a second delivery of one order, a refund, an
 * order that cannot be made, a sale the batch refused) are left untouched, to be processed alone
 * after this commits, where their outcome or failure is recorded as for any delivery. A crash or
 * a failure of the whole group rolls every delivery back: the sales the batch had made are found
 * again by their references when the deliveries are processed again, so none is made twice.
 */
export async function processPedidoGroup(
  db: Kysely<WebhookDb>,
  deps: ProcessingDeps,
  /** The deliveries, with the attempt of each (counted when it finishes). */
  attempts: ReadonlyMap<number, number>,
): Promise<Map<number, ProcessResult>> {
  return inTransaction(db, async (trx) => {
    const results = new Map<number, ProcessResult>();
    const candidates = await candidatesOf(trx, [...attempts.keys()], results);
    if (candidates.length === 0) return results;
    const [{ entrega: first }] = candidates as [(typeof candidates)[number]];
    const known = await lockPedidos(
      trx,
      first.empresa_id,
      candidates.map(({ entrega, intent }) => ({
        referencia: intent.referencia,
        origen: entrega.origen,
        integracion_id: entrega.integracion_id,
      })),
    );
    const pedidos: Array<NuevoPedido> = [];
    for (const { entrega, intent } of candidates) {
      const decision = decidePedido(intent, known.get(intent.referencia));
      if (decision.kind === 'crear') pedidos.push({ entrega, intent, estado: decision.estado });
    }
    const made = await makePedidoVentas(trx, pedidos, deps, `webhook-${first.id}+${pedidos.length}`);
    for (const [i, { entrega, intent }] of pedidos.entries()) {
      const venta = made[i];
      if (venta === undefined || venta instanceof Error) continue;
      const outcome = await ventaMade(entrega, intent, known.get(intent.referencia)!, venta, deps);
      await finishEntrega(trx, entrega.id, outcome, attempts.get(entrega.id));
      results.set(entrega.id, outcome.estado);
    }
    return results;
  });
}

/**
 * The deliveries whose orders' sales may be made together, each locked: `recibida`, of the first
 * one's integration, the first delivery of a new order. One no longer `recibida` is answered
 * `omitida` in `results`.
 */
async function candidatesOf(
  trx: Transaction<WebhookDb>,
  ids: readonly number[],
  results: Map<number, ProcessResult>,
): Promise<Array<{ entrega: LockedEntrega; intent: PedidoIntent }>> {
  const candidates: Array<{ entrega: LockedEntrega; intent: PedidoIntent }> = [];
  const seen = new Set<string>();
  for (const entrega of await lockEntregas(trx, ids)) {
    if (entrega.estado !== 'recibida') {
      results.set(entrega.id, 'omitida');
      continue;
    }
    if (entrega.recurso !== 'pedido' || entrega.tema === 'refunds/create') continue;
    if (candidates.length > 0 && entrega.integracion_id !== candidates[0]!.entrega.integracion_id) continue;
    const intent = readIntent(entrega);
    // An order's refunds and second deliveries are applied alone, after its sale is made.
    if (!intent || intent.reembolsos.length > 0 || seen.has(intent.referencia)) continue;
    seen.add(intent.referencia);
    candidates.push({ entrega, intent });
  }
  return candidates;
}

/** What the delivery's order asks, or undefined when it cannot be read (processed alone, it fails with the reason). */
function readIntent(entrega: LockedEntrega): PedidoIntent | undefined {
  try {
    return pedidoIntent(entrega.plataforma, parseBody(entrega));
  } catch {
    return undefined;
  }
}
