import { MAX_RESERVATIONS_PER_REQUEST, type TenantContext } from '@erp/contracts';
import { storedEstado } from '../domain/sale-rules';
import { runAlone, runVentaPipeline, type CreateVentaDeps, type CreateVentaRequest, type VentaOutcome } from './venta-pipeline.flow';

/**
 * The sales of a batch, in order, each with the outcome `createSale` would have given it had the
 * sales been sent one after another: the same plans, refusals and idempotent answers, stock taken
 * and correlatives given in that order. Consecutive sales that share no reference and check no
 * customer's credit go through the pipeline together (`runVentaPipeline` over the group); any
 * other goes through it alone, after those before it committed. `stop` is asked before each group (when it
 * holds from the start, one sale is made): the outcomes answer the sales started, a prefix of
 * `reqs` (never empty).
 */
export async function createSales(
  deps: CreateVentaDeps,
  reqs: readonly CreateVentaRequest[],
  ctx: TenantContext,
  stop: () => boolean = () => false,
): Promise<VentaOutcome[]> {
  const outcomes: VentaOutcome[] = [];
  // Started when the time is already up, only the first sale is: as many as `createSale` would.
  const most = stop() ? 1 : MAX_RESERVATIONS_PER_REQUEST;
  while (outcomes.length < reqs.length && (outcomes.length === 0 || !stop())) {
    const group = writableTogether(reqs.slice(outcomes.length, outcomes.length + most));
    if (group.length > 0) outcomes.push(...(await runVentaPipeline(deps, group, ctx)));
    else outcomes.push(await runAlone(deps, reqs[outcomes.length]!, ctx));
  }
  return outcomes;
}

/**
 * The first sales that can be written together: each with a reference not repeated among them (a
 * repeat must see the first one committed) and none whose customer's credit is checked (its
 * check depends on which of the sales before it commit).
 */
function writableTogether(reqs: readonly CreateVentaRequest[]): CreateVentaRequest[] {
  const referencias = new Set<string>();
  const group: CreateVentaRequest[] = [];
  for (const req of reqs) {
    const referencia = req.referencia_externa ?? req.referencia;
    const checksCredit = storedEstado(req.estado) === 'Pendiente' && (req.id_cliente ?? null) !== null;
    if (!referencia || referencias.has(referencia) || checksCredit || group.length === MAX_RESERVATIONS_PER_REQUEST) break;
    referencias.add(referencia);
    group.push(req);
  }
  return group;
}
