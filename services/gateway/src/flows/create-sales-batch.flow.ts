import type { z } from 'zod';
import { appErrorOf, type Bus } from '@erp/bus';
import {
  SaleCreateBody,
  detailsFromZod,
  hasUnknownKeys,
  isAppError,
  type ParsedRequestOf,
  type SaleBatchBody,
  type SaleBatchResult,
  type TenantContext,
  type salesApiSubjects,
} from '@erp/contracts';
import { MESSAGES, appErrorAnswer, errorEnvelope } from '../domain/error-envelope';
import { busSales } from '../ports/sales.port';

type BatchItem = ParsedRequestOf<typeof salesApiSubjects, 'sales.batch.create'>['ventas'][number];

/** Items per request to sales stay well under NATS's default 1 MB payload (a batch body may be 1 MB). */
const MAX_REQUEST_BYTES = 512 * 1024;

export interface SalesBatchOutcome {
  resultados: SaleBatchResult[];
  creadas: number;
  existentes: number;
  rechazadas: number;
}

/**
 * `POST /sales/batch`: each item checked alone as the body of `POST /sales` (a refusal is its
 * result, with the envelope that request would have got), the valid ones sent to sales in order,
 * as many requests as it takes: sales answers a prefix of each request within its time budget,
 * and the rest goes again. When sales cannot be reached or does not answer, the items it had not
 * answered get that error (503 or 504: perhaps applied, perhaps not) and nothing more is sent; the
 * items answered keep their outcome, so a partner that retries the batch learns every outcome.
 */
export async function createSalesBatch(bus: Bus, body: z.output<typeof SaleBatchBody>, ctx: TenantContext): Promise<SalesBatchOutcome> {
  const resultados: SaleBatchResult[] = [];
  const pending: BatchItem[] = [];
  body.ventas.forEach((raw, indice) => {
    const parsed = SaleCreateBody.safeParse(raw);
    const referencia_externa = raw.referencia_externa;
    if (parsed.success) pending.push({ indice, venta: { ...parsed.data, origen: 'api' } });
    else
      resultados[indice] = refused(indice, referencia_externa, {
        status: 422,
        body: errorEnvelope(
          422,
          hasUnknownKeys(parsed.error) ? 'campo_desconocido' : 'cuerpo_invalido',
          MESSAGES.invalidBody,
          detailsFromZod(parsed.error),
        ),
      });
  });
  const referencias = body.ventas.map((v) => v.referencia_externa);
  const sales = busSales(bus);

  while (pending.length > 0) {
    const slice = requestSlice(pending);
    try {
      const reply = await sales.createBatch(ctx, { ventas: slice });
      // Sales always answers the first item it is sent: an empty reply would send the same items forever.
      if (reply.resultados.length === 0) throw new Error('sales.batch.create answered no item');
      for (const r of reply.resultados) {
        const referencia_externa = referencias[r.indice]!;
        if (r.error) resultados[r.indice] = refused(r.indice, referencia_externa, appErrorAnswer(appErrorOf(r.error)));
        else resultados[r.indice] = { indice: r.indice, referencia_externa, status: r.idempotent ? 200 : 201, data: r.venta! };
      }
      pending.splice(0, reply.resultados.length);
    } catch (err) {
      if (!isAppError(err)) throw err;
      for (const { indice } of pending.splice(0)) resultados[indice] = refused(indice, referencias[indice]!, appErrorAnswer(err));
    }
  }

  const count = (test: (status: number) => boolean) => resultados.filter((r) => test(r.status)).length;
  return { resultados, creadas: count((s) => s === 201), existentes: count((s) => s === 200), rechazadas: count((s) => s >= 400) };
}

function refused(indice: number, referencia_externa: string, { status, body }: ReturnType<typeof appErrorAnswer>): SaleBatchResult {
  const { success, ...fields } = body;
  void success;
  return { indice, referencia_externa, status, ...fields };
}

/** The first pending items, as many as fit one request. */
function requestSlice(pending: BatchItem[]): BatchItem[] {
  let bytes = 0;
  let n = 0;
  while (n < pending.length) {
    bytes += Buffer.byteLength(JSON.stringify(pending[n]));
    if (n > 0 && bytes > MAX_REQUEST_BYTES) break;
    n++;
  }
  return pending.slice(0, n);
}
