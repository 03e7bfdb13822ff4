import { randomUUID } from 'node:crypto';
import { appErrorOf, enqueueEvents } from '@erp/bus';
import { AppError, MAX_RESERVATIONS_PER_REQUEST, Sale, isAppError, salesEvents, type SaleInput, type TenantContext } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { findVentas, findVentasReferenciadas, type VentaReferenciada } from '../db/venta-read.repository';
import { insertVentasNumeradas, lockDocumentos, lockReferencias, nextVentaIds, type VentaNumerada } from '../db/venta.repository';
import { huellaOf } from '../domain/huella';
import { createDraft, planDraft, saleDocument, type SaleDraft, type SalePlan } from '../domain/sale-plan';
import { documentoProblem, storedEstado } from '../domain/sale-rules';
import { saleStockCause } from '../domain/stock-lines';
import { busInventory } from '../ports/inventory.port';
import {
  answerStored,
  createSale,
  detallesToIssue,
  planRefusal,
  releaseStock,
  reservaOf,
  reserveRefusal,
  ventaColumns,
  type CreateRequest,
  type CreateSaleDeps,
} from './create-sale.flow';
import { resolveReferencesOfMany } from './sale-references.flow';

/** What one sale of a batch came to: what `createSale` answered, or what it threw. */
export type SaleOutcome = { venta: SaleInput; idempotent: boolean } | { error: unknown };

/**
 * The sales of a batch, in order, each with the outcome `createSale` would have given it had the
 * sales been sent one after another: the same plans, refusals and idempotent answers, stock taken
 * and correlatives given in that order. Consecutive sales that share no reference and check no
 * customer's credit are written together (`createSalesTogether`); any other goes through
 * `createSale` alone, after those before it committed. `stop` is asked before each group (when it
 * holds from the start, one sale is made): the outcomes answer the sales started, a prefix of
 * `reqs` (never empty).
 */
export async function createSales(
  deps: CreateSaleDeps,
  reqs: readonly CreateRequest[],
  ctx: TenantContext,
  stop: () => boolean = () => false,
): Promise<SaleOutcome[]> {
  const outcomes: SaleOutcome[] = [];
  // Started when the time is already up, only the first sale is: as many as `createSale` would.
  const most = stop() ? 1 : MAX_RESERVATIONS_PER_REQUEST;
  while (outcomes.length < reqs.length && (outcomes.length === 0 || !stop())) {
    const group = writableTogether(reqs.slice(outcomes.length, outcomes.length + most));
    if (group.length > 0) outcomes.push(...(await createSalesTogether(deps, group, ctx)));
    else outcomes.push(await settle(() => createSale(deps, reqs[outcomes.length]!, ctx)));
  }
  return outcomes;
}

/**
 * The first sales that can be written together: each with a reference not repeated among them (a
 * repeat must see the first one committed) and none whose customer's credit is checked (its
 * check depends on which of the sales before it commit).
 */
function writableTogether(reqs: readonly CreateRequest[]): CreateRequest[] {
  const referencias = new Set<string>();
  const group: CreateRequest[] = [];
  for (const req of reqs) {
    const referencia = req.referencia_externa ?? req.referencia;
    const checksCredit = storedEstado(req.estado) === 'Pendiente' && (req.id_cliente ?? null) !== null;
    if (!referencia || referencias.has(referencia) || checksCredit || group.length === MAX_RESERVATIONS_PER_REQUEST) break;
    referencias.add(referencia);
    group.push(req);
  }
  return group;
}

async function settle(run: () => Promise<{ venta: SaleInput; idempotent: boolean }>): Promise<SaleOutcome> {
  try {
    return await run();
  } catch (error) {
    return { error };
  }
}

interface Planned {
  index: number;
  req: CreateRequest;
  huella: string;
  referencia: string;
  draft: SaleDraft;
  plan: SalePlan;
}

/** Where a sale's reservation stands: taken under its key, or refused (nothing taken). */
type Reserva = { clave: string; taken: true } | { clave: string; refusal: AppError };

/**
 * Sales with distinct references and no credit check, written as `createSale` writes each, in a
 * few round trips for all: their stored references in one query, their references resolved in
 * one request to inventory and one round trip here, each planned as alone; then one transaction
 * that locks their references (sorted), takes their ids, reserves their stock in one request to
 * inventory (each sale all or nothing under its own key, in order), locks their document types
 * (sorted), numbers them in order and writes them, their lines and their created events. A sale
 * refused in there (its stock, its document type) is left out: it takes no number, and its
 * reservation, if any, is released after the commit. The undo and the crash path are
 * `createSale`'s: a reservation whose sale did not commit is released here, or by inventory's
 * sweeper, which finds no sale with its key. A failure of the transaction that is no
 * error of the bus sends each sale through `createSale` alone, for the outcome it would have had.
 */
async function createSalesTogether(deps: CreateSaleDeps, reqs: readonly CreateRequest[], ctx: TenantContext): Promise<SaleOutcome[]> {
  const { db } = deps;
  const inventory = deps.inventory ?? busInventory(deps.bus);
  const empresaId = ctx.empresa.id;
  const outcomes: Array<SaleOutcome | undefined> = reqs.map(() => undefined);
  const huellas = reqs.map((req) => huellaOf(req));
  const referencias = reqs.map((req) => (req.referencia_externa ?? req.referencia)!);
  const answer = (index: number, stored: VentaReferenciada) =>
    settle(() => answerStored(db, empresaId, reqs[index]!, huellas[index]!, stored));

  const stored = await findVentasReferenciadas(db, empresaId, referencias);
  const fresh: number[] = [];
  for (const [index, referencia] of referencias.entries()) {
    const venta = stored.get(referencia);
    if (venta) outcomes[index] = await answer(index, venta);
    else fresh.push(index);
  }
  const drafts = fresh.map((index) => createDraft(reqs[index]!, ctx));
  const resolutions = fresh.length > 0 ? await resolveReferencesOfMany(db, inventory, drafts, ctx) : [];
  const planned: Planned[] = [];
  fresh.forEach((index, k) => {
    const result = planDraft(drafts[k]!, ctx, resolutions[k]!);
    if (!result.ok) outcomes[index] = { error: planRefusal(result) };
    else
      planned.push({
        index,
        req: reqs[index]!,
        huella: huellas[index]!,
        referencia: referencias[index]!,
        draft: drafts[k]!,
        plan: result.plan,
      });
  });
  if (planned.length === 0) return outcomes as SaleOutcome[];

  // Taken once even if the transaction is retried: the ids and the keys stay the same.
  const ids = new Map<number, number>();
  const reservas = new Map<number, Reserva>();
  const attempted: string[] = [];
  let written: Map<number, SaleInput> | undefined;
  let winners = new Map<string, VentaReferenciada>();
  const refused = new Map<number, AppError>();
  try {
    await inTransaction(db, async (trx) => {
      refused.clear();
      // Duplicates of these references in other requests wait here for this one to commit.
      await lockReferencias(
        trx,
        empresaId,
        planned.map((p) => p.referencia),
      );
      winners = await findVentasReferenciadas(
        trx,
        empresaId,
        planned.map((p) => p.referencia),
      );
      const left = planned.filter((p) => !winners.has(p.referencia));
      const unnumbered = left.filter((p) => !ids.has(p.index));
      (await nextVentaIds(trx, unnumbered.length)).forEach((id, k) => ids.set(unnumbered[k]!.index, id));

      const toReserve = left.filter((p) => p.plan.stockLines.length > 0 && !reservas.has(p.index));
      if (toReserve.length > 0) {
        const claves = toReserve.map(() => randomUUID());
        attempted.push(...claves);
        const { resultados } = await inventory.reserveMany(
          ctx,
          {
            reservas: toReserve.map((p, k) => {
              const causa = saleStockCause({ id: ids.get(p.index)!, origen: p.req.origen, referencia_externa: p.plan.referencia });
              return reservaOf(p.plan, claves[k]!, causa, p.req.permitir_sin_stock);
            }),
          },
          trx,
        );
        toReserve.forEach((p, k) => {
          const error = resultados[k]?.error;
          if (!error) return reservas.set(p.index, { clave: claves[k]!, taken: true });
          const err = appErrorOf(error);
          reservas.set(p.index, { clave: claves[k]!, refusal: reserveRefusal(err, p.plan) ?? err });
        });
        deps.after?.reserved?.();
      }

      const issuable = left.filter((p) => {
        const reserva = reservas.get(p.index);
        return !reserva || 'taken' in reserva;
      });
      const documentos = await lockDocumentos(
        trx,
        empresaId,
        issuable.map((p) => p.plan.documento.id),
      );
      const nextNumero = new Map<number, number>();
      const emitidoEn = new Date();
      const ventas: Array<VentaNumerada & { index: number }> = [];
      for (const p of issuable) {
        const { plan, draft, req, huella } = p;
        const doc = documentos.get(plan.documento.id);
        const problem = documentoProblem(doc, plan.documento.id, plan.sucursal.id, plan.estado);
        if (!doc || problem) {
          const message = problem ?? `El tipo de documento ${plan.documento.id} no puede emitir la venta`;
          refused.set(p.index, AppError.rule('dato_relacionado_invalido', message, { id_documento: [message] }));
          continue;
        }
        const numero = nextNumero.get(doc.id) ?? doc.correlativo;
        nextNumero.set(doc.id, numero + 1);
        const correlativo = `${doc.prefijo}${numero}`;
        const reserva = reservas.get(p.index);
        ventas.push({
          index: p.index,
          id: ids.get(p.index)!,
          ...ventaColumns(plan, draft, req, huella, reserva?.clave ?? null, emitidoEn),
          numero,
          correlativo,
          nombre_documento: doc.nombre,
          documento: saleDocument(plan, draft, ctx, { correlativo, numero, emitido_en: emitidoEn.toISOString() }),
        });
      }
      const rows = ventas.map(({ index: _index, ...venta }) => venta);
      await insertVentasNumeradas(
        trx,
        empresaId,
        rows,
        issuable.flatMap((p) =>
          ventas.some((v) => v.index === p.index)
            ? detallesToIssue(p.plan, emitidoEn).map((d) => ({ ...d, venta_id: ids.get(p.index)! }))
            : [],
        ),
      );
      const sales = await findVentas(
        trx,
        empresaId,
        rows.map((v) => v.id),
      );
      await enqueueEvents(
        trx,
        salesEvents,
        'events.sales.sale.created',
        rows.map((v) => ({
          empresa_id: empresaId,
          id_venta: v.id,
          clave_reserva: v.clave_reserva ?? null,
          venta: Sale.parse(sales.get(v.id)),
        })),
        ctx,
      );
      written = new Map(ventas.map((v) => [v.index, sales.get(v.id)!]));
    });
  } catch (err) {
    await releaseAll(deps, inventory, attempted, ctx);
    if (isAppError(err)) {
      for (const p of planned) outcomes[p.index] = { error: err };
    } else {
      deps.bus.logger.warn({ err }, 'a batch of sales failed together; each is created alone');
      for (const p of planned) outcomes[p.index] = await settle(() => createSale(deps, p.req, ctx));
    }
    return outcomes as SaleOutcome[];
  }
  deps.after?.committed?.();

  const sold = written!;
  const unsold = [...reservas].flatMap(([index, r]) => ('taken' in r && !sold.has(index) ? [r.clave] : []));
  await releaseAll(deps, inventory, unsold, ctx);
  if (sold.size > 0) deps.onCommitted?.();
  for (const p of planned) {
    const venta = sold.get(p.index);
    const reserva = reservas.get(p.index);
    const winner = winners.get(p.referencia);
    if (venta) outcomes[p.index] = { venta, idempotent: false };
    else if (winner) outcomes[p.index] = await answer(p.index, winner);
    else if (reserva && 'refusal' in reserva) outcomes[p.index] = { error: reserva.refusal };
    else outcomes[p.index] = { error: refused.get(p.index) ?? new Error(`Sale ${p.index} of a batch was neither written nor refused`) };
  }
  return outcomes as SaleOutcome[];
}

/** The undo of reservations whose sales did not commit (the sweeper's, if inventory cannot be reached now). */
async function releaseAll(deps: CreateSaleDeps, inventory: ReturnType<typeof busInventory>, claves: readonly string[], ctx: TenantContext) {
  await Promise.all(claves.map((clave) => releaseStock(deps.bus, inventory, clave, ctx)));
}
