import { wireErrorOf, type Logger } from '@erp/bus';
import type { ParsedRequestOf, ReplyInputOf, TenantContext, salesApiSubjects } from '@erp/contracts';
import { createSale, type CreateSaleDeps } from '../flows/create-sale.flow';

type BatchRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.batch.create'>;
type BatchReply = ReplyInputOf<typeof salesApiSubjects, 'sales.batch.create'>;

/** The reply stays well under NATS's default 1 MB payload: a sale of 100 lines is about 40 KB of JSON. */
const MAX_REPLY_BYTES = 512 * 1024;

/**
 * `sales.batch.create`: each sale through `createSale` one after another, in the order sent, so
 * stock and correlatives end as if the partner had sent them one by one; each one's refusal is
 * its result and stops nothing else. No item is started once `plazo_ms` has passed or the reply
 * has grown past `MAX_REPLY_BYTES` (the first always is): the reply comes within the caller's
 * timeout and fits the bus, so the caller learns the outcome of everything this request committed.
 */
export function createSalesBatchHandler(deps: CreateSaleDeps, logger: Logger) {
  return async ({ ventas, plazo_ms }: BatchRequest, ctx: TenantContext): Promise<BatchReply> => {
    const started = performance.now();
    const resultados: BatchReply['resultados'] = [];
    let bytes = 0;
    for (const { indice, venta } of ventas) {
      if (resultados.length > 0 && (performance.now() - started >= plazo_ms || bytes >= MAX_REPLY_BYTES)) break;
      try {
        const { venta: sale, idempotent } = await createSale(deps, venta, ctx);
        bytes += Buffer.byteLength(JSON.stringify(sale));
        resultados.push({ indice, venta: sale, idempotent });
      } catch (err) {
        resultados.push({ indice, error: wireErrorOf(err, () => logger.child({ requestId: ctx.requestId, indice })) });
      }
    }
    return { resultados };
  };
}
