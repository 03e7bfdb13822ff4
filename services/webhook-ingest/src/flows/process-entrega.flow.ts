import type { Kysely } from 'kysely';
import { inTransaction } from '@erp/db';
import type { Logger } from '@erp/bus';
import { finishEntrega, lockEntrega } from '../db/entrega.repository';
import type { WebhookDb } from '../db/tables';
import { isPermanent, reasonOf } from '../domain/failures';
import { processPedido, type ProcessingDeps } from './process-pedido.flow';
import { processProducto } from './process-producto.flow';

export type ProcessResult = 'procesada' | 'ignorada' | 'fallida' | 'omitida';

/**
 * Processes one stored delivery, once: the delivery row is locked and only a `recibida` one is
 * processed, so a redelivered event or two replicas never apply it twice. A permanent failure
 * (unknown product, missing configuration, a business rule) keeps it as `fallida` with its
 * reason; a transient one throws so the event is retried, unless `lastAttempt`, when it is kept
 * as failed too: nothing is dropped silently.
 */
export async function processEntrega(
  db: Kysely<WebhookDb>,
  deps: ProcessingDeps,
  idEntrega: number,
  options: { attempt?: number; lastAttempt?: boolean; logger?: Logger } = {},
): Promise<ProcessResult> {
  try {
    return await inTransaction(db, async (trx) => {
      const entrega = await lockEntrega(trx, idEntrega);
      if (!entrega || entrega.estado !== 'recibida') return 'omitida';
      try {
        const outcome = entrega.recurso === 'pedido' ? await processPedido(trx, entrega, deps) : await processProducto(trx, entrega, deps);
        await finishEntrega(trx, entrega.id, outcome, options.attempt);
        return outcome.estado;
      } catch (err) {
        if (!isPermanent(err)) throw err;
        options.logger?.warn({ idEntrega, reason: reasonOf(err) }, 'webhook delivery failed');
        // Nothing of this attempt stays but the failure: savepoint-free, so mark it in a fresh transaction.
        throw new MarkFailed(reasonOf(err));
      }
    });
  } catch (err) {
    if (err instanceof MarkFailed || options.lastAttempt) {
      const motivo = err instanceof MarkFailed ? err.message : `Sin éxito tras varios intentos: ${reasonOf(err)}`;
      const marked = await inTransaction(db, async (trx) => {
        const entrega = await lockEntrega(trx, idEntrega);
        if (!entrega || entrega.estado !== 'recibida') return false;
        await finishEntrega(trx, idEntrega, { estado: 'fallida', motivo }, options.attempt);
        return true;
      });
      return marked ? 'fallida' : 'omitida';
    }
    throw err;
  }
}

class MarkFailed extends Error {
  override readonly name = 'MarkFailed';
}
