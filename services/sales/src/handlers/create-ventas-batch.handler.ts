import { wireErrorOf, type Logger } from '@erp/bus';
import type { ParsedRequestOf, ReplyInputOf, TenantContext, salesApiSubjects } from '@erp/contracts';
import { createVentas } from '../flows/create-ventas.flow';
import type { CreateVentaDeps } from '../flows/venta-pipeline.flow';

type BatchRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.batch.create'>;
type BatchReply = ReplyInputOf<typeof salesApiSubjects, 'sales.batch.create'>;

/**
 * `sales.batch.create`: the sales through `createVentas`, in the order sent, within its budget
 * (`plazo_ms`, the reply's size); each one's refusal is its result and stops nothing else. The
 * reply answers the prefix of the items started.
 */
export function createVentasBatchHandler(deps: CreateVentaDeps, logger: Logger) {
  return async ({ ventas, plazo_ms }: BatchRequest, ctx: TenantContext): Promise<BatchReply> => {
    const outcomes = await createVentas(
      deps,
      ventas.map((i) => i.venta),
      ctx,
      plazo_ms,
    );
    const resultados = outcomes.map((outcome, k) => {
      const { indice } = ventas[k]!;
      if ('error' in outcome)
        return { indice, error: wireErrorOf(outcome.error, () => logger.child({ requestId: ctx.requestId, indice })) };
      return { indice, venta: outcome.venta, idempotent: outcome.idempotent };
    });
    return { resultados };
  };
}
