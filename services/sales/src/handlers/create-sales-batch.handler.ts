import { wireErrorOf, type Logger } from '@erp/bus';
import type { ParsedRequestOf, ReplyInputOf, TenantContext, salesApiSubjects } from '@erp/contracts';
import type { CreateVentaDeps } from '../flows/venta-pipeline.flow';
import { createSales } from '../flows/create-sales.flow';

type BatchRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.batch.create'>;
type BatchReply = ReplyInputOf<typeof salesApiSubjects, 'sales.batch.create'>;

/** The reply stays well under NATS's default 1 MB payload: a sale of 100 lines is about 40 KB of JSON. */
const MAX_REPLY_BYTES = 512 * 1024;

/** A generous guess of a sale's size in a reply, from its lines (about 400 bytes each as answered). */
const replyBytesOf = (venta: BatchRequest['ventas'][number]['venta']) => 1024 + 512 * venta.detalles.length;

/**
 * `sales.batch.create`: the sales through `createSales`, in the order sent, so stock and
 * correlatives end as if the partner had sent them one by one; each one's refusal is its result
 * and stops nothing else. No group of sales is started once `plazo_ms` has passed, nor one whose
 * sales could grow the reply past `MAX_REPLY_BYTES` (the first group always is): the reply comes
 * within the caller's timeout and fits the bus, so the caller learns the outcome of everything
 * this request committed.
 */
export function createSalesBatchHandler(deps: CreateVentaDeps, logger: Logger) {
  return async ({ ventas, plazo_ms }: BatchRequest, ctx: TenantContext): Promise<BatchReply> => {
    const started = performance.now();
    const resultados: BatchReply['resultados'] = [];
    let bytes = 0;
    while (resultados.length < ventas.length) {
      if (resultados.length > 0 && (performance.now() - started >= plazo_ms || bytes >= MAX_REPLY_BYTES)) break;
      // As many as the reply can still hold by the guess, at least one.
      let n = 0;
      for (let guess = bytes; resultados.length + n < ventas.length; n++) {
        guess += replyBytesOf(ventas[resultados.length + n]!.venta);
        if (n > 0 && guess > MAX_REPLY_BYTES) break;
      }
      const items = ventas.slice(resultados.length, resultados.length + n);
      const outcomes = await createSales(
        deps,
        items.map((i) => i.venta),
        ctx,
        () => performance.now() - started >= plazo_ms,
      );
      outcomes.forEach((outcome, k) => {
        const { indice } = items[k]!;
        if ('error' in outcome) {
          resultados.push({ indice, error: wireErrorOf(outcome.error, () => logger.child({ requestId: ctx.requestId, indice })) });
          return;
        }
        bytes += Buffer.byteLength(JSON.stringify(outcome.venta));
        resultados.push({ indice, venta: outcome.venta, idempotent: outcome.idempotent });
      });
      if (outcomes.length < items.length) break;
    }
    return { resultados };
  };
}
