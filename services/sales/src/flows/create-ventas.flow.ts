import { MAX_RESERVATIONS_PER_REQUEST, type TenantContext } from '@erp/contracts';
import { storedEstado } from '../domain/venta-rules';
import { runAlone, runVentaPipeline, type CreateVentaDeps, type CreateVentaRequest, type VentaOutcome } from './venta-pipeline.flow';

/** The reply stays well under NATS's default 1 MB payload: a sale of 100 lines is about 40 KB of JSON. */
const MAX_REPLY_BYTES = 512 * 1024;

/** A generous guess of a sale's size in a reply, from its lines (about 400 bytes each as answered). */
const replyBytesOf = (req: CreateVentaRequest) => 1024 + 512 * req.detalles.length;

/**
 * The sales of a batch, in order, each with the outcome `createVenta` would have given it had the
 * sales been sent one after another: the same plans, refusals and idempotent answers, stock taken
 * and correlatives given in that order. Consecutive sales that share no reference and check no
 * customer's credit go through the pipeline together (`runVentaPipeline` over the group); any
 * other goes through it alone, after those before it committed.
 *
 * The batch's budget is kept here: no group is started once `plazoMs` has passed, nor one whose
 * sales could grow the reply past `MAX_REPLY_BYTES` by the guess (the first group always is; when
 * the time is up from the start, it is one sale). The outcomes answer the sales started, a prefix
 * of `reqs` (never empty), so the reply comes within the caller's timeout and fits the bus, and
 * the caller learns the outcome of everything committed.
 */
export async function createVentas(
  deps: CreateVentaDeps,
  reqs: readonly CreateVentaRequest[],
  ctx: TenantContext,
  plazoMs: number,
): Promise<VentaOutcome[]> {
  const started = performance.now();
  const late = () => performance.now() - started >= plazoMs;
  const most = late() ? 1 : MAX_RESERVATIONS_PER_REQUEST;
  const outcomes: VentaOutcome[] = [];
  let bytes = 0;
  while (outcomes.length < reqs.length && (outcomes.length === 0 || (!late() && bytes < MAX_REPLY_BYTES))) {
    const next = replyFitting(reqs.slice(outcomes.length, outcomes.length + most), bytes);
    const group = writableTogether(next);
    const done = group.length > 0 ? await runVentaPipeline(deps, group, ctx) : [await runAlone(deps, next[0]!, ctx)];
    for (const outcome of done) {
      if (!('error' in outcome)) bytes += Buffer.byteLength(JSON.stringify(outcome.venta));
      outcomes.push(outcome);
    }
  }
  return outcomes;
}

/** The first sales the reply can still hold by the guess, after `bytes` already answered; at least one. */
function replyFitting(reqs: readonly CreateVentaRequest[], bytes: number): CreateVentaRequest[] {
  let guess = bytes;
  let n = 0;
  for (; n < reqs.length; n++) {
    guess += replyBytesOf(reqs[n]!);
    if (n > 0 && guess > MAX_REPLY_BYTES) break;
  }
  return reqs.slice(0, n);
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
