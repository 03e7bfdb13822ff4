import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { appErrorOf, enqueueEvents, type Bus } from '@erp/bus';
import {
  AppError,
  isAppError,
  Sale,
  salesEvents,
  type ParsedRequestOf,
  type SaleInput,
  type TenantContext,
  type salesApiSubjects,
} from '@erp/contracts';
import { inTransaction, isUniqueViolation } from '@erp/db';
import { findCliente, findDocumento, pendingBalance } from '../db/catalog.repository';
import type { SalesDb } from '../db/tables';
import { REFERENCIA_INDEX, insertVentasNumeradas, issueVenta, lockDocumentos, lockReferencias, nextVentaIds } from '../db/venta.repository';
import { findVenta, findVentas, findVentasReferenciadas, type VentaReferenciada } from '../db/venta-read.repository';
import { huellaOf, referenciaConflict } from '../domain/huella';
import { createDraft, planDraft, ventaDocument, type PlanResult, type VentaDraft, type VentaPlan } from '../domain/venta-plan';
import { creditProblem, documentoProblem, remapReserveDetails, summaryMessage } from '../domain/venta-rules';
import { ventaStockCause } from '../domain/stock-lines';
import { detalleColumns, plannedVentaColumns } from '../domain/venta-row';
import { busInventory, type InventoryPort } from '../ports/inventory.port';
import { resolveReferencesOfMany } from './venta-references.flow';

export type CreateVentaRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.create'>;

export interface CreateVentaDeps {
  db: Kysely<SalesDb>;
  bus: Bus;
  /** Inventory as the pipeline reaches it; over `bus` unless given. */
  inventory?: InventoryPort;
  /**
   * Inventory as reached from inside the sales transaction, when it works in that transaction (the
   * benchmark's baseline): the stock is then always taken in it, and a rollback gives it back.
   */
  inventoryIn?: (trx: Transaction<SalesDb>) => InventoryPort;
  /** Called after ventas commit (nudges the outbox relay). */
  onCommitted?: () => void;
  /** Called as the pipeline passes its stages (the chaos tests' fault points). */
  after?: CreateStageHooks;
}

/** The stages of the pipeline a caller may hear of: stock reserved, ventas committed. */
export interface CreateStageHooks {
  reserved?: () => void;
  committed?: () => void;
}

/** What the pipeline answers a venta: the venta and whether it was stored before, or what refused it. */
export type VentaOutcome = { venta: SaleInput; idempotent: boolean } | { error: unknown };

/** A venta of the group on its way, by its place in the group. */
interface Pending {
  index: number;
  req: CreateVentaRequest;
  referencia: string | null;
  huella: string;
}

interface Planned extends Pending {
  draft: VentaDraft;
  plan: VentaPlan;
}

/**
 * A venta's reservation: asked under its key, for the id the venta took so that the stock's
 * movements name it; then taken, or refused (nothing taken).
 */
interface Reserva {
  id: number;
  clave: string;
  taken: boolean;
  refusal?: AppError;
}

/** What one attempt of the transaction came to; nothing of it outlives a retry. */
interface Attempt {
  winners: Map<string, VentaReferenciada>;
  refused: Map<number, AppError>;
  written: Map<number, SaleInput>;
}

/**
 * The invoicing pipeline of `POST /sales`, of the batch, of platform orders and of the fixture
 * loader, over a group of ventas (one, or consecutive ones the batch writes together), each
 * answered as if it had been sent alone, in order:
 * answer the known (a reference already stored answers with its venta) → plan (resolve, check,
 * tax; a customer's credit checked before any stock is taken) → reserve (each venta's stock under
 * its own key and id; inside the transaction, after the references' locks, when a venta carries a
 * reference) → number and insert (the credit checked again under the customer's lock; the
 * document types locked last, so ventas of one type wait on each other for the writes and the
 * commit only; the created events in the same transaction) → settle (release what no committed
 * venta holds, answer each venta). A refusal of one venta leaves the others of the group alone.
 * The undo: a reservation whose venta did not commit is released here, or, after a crash, by
 * inventory's sweeper, which finds no venta with its key (`sales.sale.exists`).
 */
export async function runVentaPipeline(
  deps: CreateVentaDeps,
  reqs: readonly CreateVentaRequest[],
  ctx: TenantContext,
): Promise<VentaOutcome[]> {
  const inventory = deps.inventory ?? busInventory(deps.bus);
  const outcomes: Array<VentaOutcome | undefined> = reqs.map(() => undefined);
  const answer = (index: number, outcome: VentaOutcome) => (outcomes[index] = outcome);
  const unknown = await answerKnown(deps.db, reqs, ctx, answer);
  const planned = await planVentas(deps.db, inventory, unknown, ctx, answer);
  if (planned.length > 0) await writeVentas(deps, inventory, planned, ctx, answer);
  return outcomes as VentaOutcome[];
}

/** `runVentaPipeline` over one venta, whatever happens answered as its outcome. */
export async function runAlone(deps: CreateVentaDeps, req: CreateVentaRequest, ctx: TenantContext): Promise<VentaOutcome> {
  return settleOutcome(async () => (await runVentaPipeline(deps, [req], ctx))[0]!);
}

type Answer = (index: number, outcome: VentaOutcome) => void;

/** Answers the ventas whose references are stored (one query for all); the others, in order. */
async function answerKnown(db: Kysely<SalesDb>, reqs: readonly CreateVentaRequest[], ctx: TenantContext, answer: Answer) {
  const pending = reqs.map((req, index) => ({
    index,
    req,
    referencia: req.referencia_externa ?? req.referencia ?? null,
    huella: huellaOf(req),
  }));
  const referencias = pending.flatMap((p) => (p.referencia ? [p.referencia] : []));
  const stored = await findVentasReferenciadas(db, ctx.empresa.id, referencias);
  const unknown: Pending[] = [];
  for (const p of pending) {
    const venta = p.referencia ? stored.get(p.referencia) : undefined;
    if (venta) answer(p.index, await answerStored(db, ctx.empresa.id, p, venta));
    else unknown.push(p);
  }
  return unknown;
}

/**
 * Plans each venta as if alone (their references resolved together); a refused plan, or a credit
 * the venta would exceed, is its answer. The credit is checked again under the customer's lock
 * in the transaction; checked here too, it spares a reservation.
 */
async function planVentas(db: Kysely<SalesDb>, inventory: InventoryPort, pending: readonly Pending[], ctx: TenantContext, answer: Answer) {
  if (pending.length === 0) return [];
  const drafts = pending.map((p) => createDraft(p.req, ctx));
  const resolutions = await resolveReferencesOfMany(db, inventory, drafts, ctx);
  const planned: Planned[] = [];
  for (const [k, p] of pending.entries()) {
    const result = planDraft(drafts[k]!, ctx, resolutions[k]!);
    if (!result.ok) {
      answer(p.index, { error: planRefusal(result) });
      continue;
    }
    const plan = result.plan;
    if (plan.estado === 'Pendiente' && plan.cliente) {
      const problem = creditProblem(plan.cliente, await pendingBalance(db, ctx.empresa.id, plan.cliente.id), plan.payment.saldo);
      if (problem) {
        answer(p.index, { error: creditRefusal(problem) });
        continue;
      }
    }
    planned.push({ ...p, draft: drafts[k]!, plan });
  }
  return planned;
}

/**
 * Reserves, numbers and inserts the planned ventas, then settles them. The reservations are the
 * one state kept across attempts of the transaction: inventory took them, and a rolled-back
 * attempt does not give them back, so a retry reuses each (same key, same id) instead of taking
 * the stock twice; everything read or decided in the database is an attempt's own.
 */
async function writeVentas(
  deps: CreateVentaDeps,
  inventory: InventoryPort,
  planned: readonly Planned[],
  ctx: TenantContext,
  answer: Answer,
) {
  const { db } = deps;
  const reservas = new Map<number, Reserva>();
  let attempt: Attempt;
  try {
    // Without references nothing has to happen in the transaction before the stock is taken:
    // taken first, it holds no connection while inventory answers.
    if (!planned.some((p) => p.plan.referencia) && !deps.inventoryIn)
      await reserveVentas(deps, inventory, planned, reservas, new Map(), ctx);
    const writable = planned.filter((p) => !reservas.get(p.index)?.refusal);
    attempt =
      writable.length === 0
        ? { winners: new Map(), refused: new Map(), written: new Map() }
        : await inTransaction(db, (trx) => writeAttempt(trx, deps, inventory, writable, reservas, ctx));
  } catch (err) {
    await releaseAll(
      deps.bus,
      inventory,
      [...reservas.values()].filter((r) => !r.refusal),
      ctx,
    );
    await answerFailure(deps, planned, err, ctx, answer);
    return;
  }
  if (attempt.written.size > 0) deps.after?.committed?.();
  await settleVentas(deps, inventory, planned, reservas, attempt, ctx, answer);
}

/** One attempt of the transaction: references locked, stock reserved, credit checked, ventas numbered and inserted. */
async function writeAttempt(
  trx: Transaction<SalesDb>,
  deps: CreateVentaDeps,
  inventory: InventoryPort,
  planned: readonly Planned[],
  reservas: Map<number, Reserva>,
  ctx: TenantContext,
): Promise<Attempt> {
  const empresaId = ctx.empresa.id;
  const referencias = planned.flatMap((p) => p.plan.referencia ?? []);
  // Duplicates of these references in other requests wait here for this one to commit, before reserving anything.
  await lockReferencias(trx, empresaId, referencias);
  const winners = await findVentasReferenciadas(trx, empresaId, referencias);
  const left = planned.filter((p) => !p.plan.referencia || !winners.has(p.plan.referencia));
  // Ventas written together take their ids at once, in order; alone, a venta takes one only to
  // reserve (its insert gives it one otherwise). A reserved venta keeps the id its stock names.
  const ids = new Map([...reservas].map(([index, r]) => [index, r.id]));
  if (left.length > 1) await takeIds(trx, left, ids);
  await reserveVentas(deps, deps.inventoryIn?.(trx) ?? inventory, left, reservas, ids, ctx, trx);

  const refused = new Map<number, AppError>();
  const issuable: Planned[] = [];
  for (const p of left.filter((p) => !reservas.get(p.index)?.refusal)) {
    const credit = await creditUnderLock(trx, p.plan);
    if (credit) refused.set(p.index, credit);
    else issuable.push(p);
  }
  const written = await numberAndInsert(trx, issuable, reservas, ids, ctx, refused);
  await enqueueEvents(
    trx,
    salesEvents,
    'events.sales.sale.created',
    [...written].map(([index, venta]) => ({
      empresa_id: empresaId,
      id_venta: venta.id,
      clave_reserva: reservas.get(index)?.clave ?? null,
      venta: Sale.parse(venta),
    })),
    ctx,
  );
  return { winners, refused, written };
}

/**
 * Takes the stock of the ventas that have not asked for theirs yet, each all or nothing under its
 * own key, in order: one venta's in a request of its own, several in one request. A refusal is the
 * venta's (nothing taken); any other failure fails them all (released by the caller).
 */
async function reserveVentas(
  deps: CreateVentaDeps,
  inventory: InventoryPort,
  planned: readonly Planned[],
  reservas: Map<number, Reserva>,
  ids: Map<number, number>,
  ctx: TenantContext,
  trx?: Transaction<SalesDb>,
): Promise<void> {
  const toReserve = planned.filter((p) => p.plan.stockLines.length > 0 && !reservas.has(p.index));
  if (toReserve.length === 0) return;
  // A venta that reserves stock takes its id first: the reservation's movements name it.
  await takeIds(trx ?? deps.db, toReserve, ids);
  const asked = toReserve.map((p) => {
    const reserva: Reserva = { id: ids.get(p.index)!, clave: randomUUID(), taken: false };
    reservas.set(p.index, reserva);
    return { p, reserva, req: reservaOf(p, reserva) };
  });
  if (asked.length === 1) {
    const [{ p, reserva, req }] = asked as [(typeof asked)[number]];
    try {
      await inventory.reserve(ctx, req);
      reserva.taken = true;
    } catch (err) {
      const refusal = reserveRefusal(err, p.plan);
      if (!refusal) throw err;
      reserva.refusal = refusal;
    }
  } else {
    const { resultados } = await inventory.reserveMany(ctx, { reservas: asked.map((a) => a.req) });
    asked.forEach(({ p, reserva }, k) => {
      const error = resultados[k]?.error;
      if (!error) reserva.taken = true;
      else reserva.refusal = reserveRefusal(appErrorOf(error), p.plan) ?? appErrorOf(error);
    });
  }
  if (asked.some((a) => a.reserva.taken)) deps.after?.reserved?.();
}

/** Ids for the ventas that have none in `ids` yet, in one statement. */
async function takeIds(db: Kysely<SalesDb> | Transaction<SalesDb>, ventas: readonly Planned[], ids: Map<number, number>): Promise<void> {
  const missing = ventas.filter((p) => !ids.has(p.index));
  (await nextVentaIds(db, missing.length)).forEach((id, k) => ids.set(missing[k]!.index, id));
}

/** Under the customer's lock, so two ventas cannot both take the last of its credit. */
async function creditUnderLock(trx: Transaction<SalesDb>, plan: VentaPlan): Promise<AppError | undefined> {
  if (plan.estado !== 'Pendiente' || !plan.cliente) return undefined;
  const cliente = await findCliente(trx, plan.empresaId, plan.cliente.id, { lock: true });
  const problem = cliente && creditProblem(cliente, await pendingBalance(trx, plan.empresaId, cliente.id), plan.payment.saldo);
  return problem ? creditRefusal(problem) : undefined;
}

/**
 * Numbers the ventas in order under their document types' locks and inserts them with their
 * lines; a venta its document type cannot issue is refused and takes no number. Alone, a venta is
 * numbered and written in one statement (`issueVenta`), holding its type's lock for that
 * statement and the commit only; several lock their types once (sorted) and are written together.
 */
async function numberAndInsert(
  trx: Transaction<SalesDb>,
  ventas: readonly Planned[],
  reservas: ReadonlyMap<number, Reserva>,
  ids: ReadonlyMap<number, number>,
  ctx: TenantContext,
  refused: Map<number, AppError>,
): Promise<Map<number, SaleInput>> {
  const issue = ventas.length === 1 ? issueAlone : issueTogether;
  return issue(trx, ventas, reservas, ids, ctx, refused);
}

async function issueAlone(
  trx: Transaction<SalesDb>,
  [p]: readonly Planned[],
  reservas: ReadonlyMap<number, Reserva>,
  ids: ReadonlyMap<number, number>,
  ctx: TenantContext,
  refused: Map<number, AppError>,
): Promise<Map<number, SaleInput>> {
  const { index, plan, draft } = p!;
  const id = ids.get(index);
  const emitidoEn = new Date();
  const venta = await issueVenta(
    trx,
    {
      ...(id !== undefined ? { id } : {}),
      ...ventaColumns(p!, reservas.get(index)?.clave ?? null, emitidoEn),
      // The number and correlative are filled in by issueVenta from the locked document type.
      documento: ventaDocument(plan, draft, ctx, { correlativo: '', numero: 0, emitido_en: emitidoEn.toISOString() }),
    },
    detallesOf(plan, emitidoEn),
  );
  if (venta) return new Map([[index, venta]]);
  const documento = await findDocumento(trx, plan.empresaId, plan.documento.id);
  refused.set(index, documentoRefusal(documentoProblem(documento, plan.documento.id, plan.sucursal.id, plan.estado), plan));
  return new Map();
}

async function issueTogether(
  trx: Transaction<SalesDb>,
  ventas: readonly Planned[],
  reservas: ReadonlyMap<number, Reserva>,
  ids: ReadonlyMap<number, number>,
  ctx: TenantContext,
  refused: Map<number, AppError>,
): Promise<Map<number, SaleInput>> {
  const empresaId = ctx.empresa.id;
  const emitidoEn = new Date();
  const documentos = await lockDocumentos(
    trx,
    empresaId,
    ventas.map((p) => p.plan.documento.id),
  );
  const nextNumero = new Map<number, number>();
  const numeradas = [];
  for (const p of ventas) {
    const { plan, draft } = p;
    const doc = documentos.get(plan.documento.id);
    const problem = documentoProblem(doc, plan.documento.id, plan.sucursal.id, plan.estado);
    if (!doc || problem) {
      refused.set(p.index, documentoRefusal(problem, plan));
      continue;
    }
    const numero = nextNumero.get(doc.id) ?? doc.correlativo;
    nextNumero.set(doc.id, numero + 1);
    const correlativo = `${doc.prefijo}${numero}`;
    const venta = {
      id: ids.get(p.index)!,
      ...ventaColumns(p, reservas.get(p.index)?.clave ?? null, emitidoEn),
      numero,
      correlativo,
      nombre_documento: doc.nombre,
      documento: ventaDocument(plan, draft, ctx, { correlativo, numero, emitido_en: emitidoEn.toISOString() }),
    };
    numeradas.push({ p, venta });
  }
  await insertVentasNumeradas(
    trx,
    empresaId,
    numeradas.map((n) => n.venta),
    numeradas.flatMap(({ p, venta }) => detallesOf(p.plan, emitidoEn).map((d) => ({ ...d, venta_id: venta.id }))),
  );
  const stored = await findVentas(
    trx,
    empresaId,
    numeradas.map((n) => n.venta.id),
  );
  return new Map(numeradas.map(({ p, venta }) => [p.index, stored.get(venta.id)!]));
}

/** After the commit: the reservations no written venta holds are released, and each venta answered. */
async function settleVentas(
  deps: CreateVentaDeps,
  inventory: InventoryPort,
  planned: readonly Planned[],
  reservas: ReadonlyMap<number, Reserva>,
  { winners, refused, written }: Attempt,
  ctx: TenantContext,
  answer: Answer,
) {
  const unsold = [...reservas].flatMap(([index, r]) => (r.taken && !written.has(index) ? [r] : []));
  await releaseAll(deps.bus, inventory, unsold, ctx);
  if (written.size > 0) deps.onCommitted?.();
  for (const p of planned) {
    const venta = written.get(p.index);
    const winner = p.plan.referencia ? winners.get(p.plan.referencia) : undefined;
    const refusal = reservas.get(p.index)?.refusal ?? refused.get(p.index);
    if (venta) answer(p.index, { venta, idempotent: false });
    else if (winner) answer(p.index, await answerStored(deps.db, ctx.empresa.id, p, winner));
    else answer(p.index, { error: refusal ?? new Error(`Venta ${p.index} of a group was neither written nor refused`) });
  }
}

/**
 * The answers when the transaction failed (its reservations released): a venta alone, or ventas
 * failed by a refusal of the whole (inventory unreachable), get the failure, but the venta whose
 * reference another request wrote first gets that venta; ventas failed together for another
 * reason each go through the pipeline alone, for the outcome each would have had.
 */
async function answerFailure(deps: CreateVentaDeps, planned: readonly Planned[], err: unknown, ctx: TenantContext, answer: Answer) {
  if (planned.length > 1 && !isAppError(err)) {
    deps.bus.logger.warn({ err }, 'a group of ventas failed together; each is created alone');
    for (const p of planned) answer(p.index, await runAlone(deps, p.req, ctx));
    return;
  }
  for (const p of planned) {
    const referencia = p.plan.referencia;
    const winner =
      referencia && isUniqueViolation(err, REFERENCIA_INDEX)
        ? (await findVentasReferenciadas(deps.db, ctx.empresa.id, [referencia])).get(referencia)
        : undefined;
    answer(p.index, winner ? await answerStored(deps.db, ctx.empresa.id, p, winner) : { error: err });
  }
}

/**
 * The answer to a request whose reference names a stored venta: that venta even if its products
 * or stock changed since; a partner's request with another body is refused, never answered as if
 * it had been booked.
 */
async function answerStored(
  db: Kysely<SalesDb>,
  empresaId: number,
  { req, huella }: Pending,
  stored: VentaReferenciada,
): Promise<VentaOutcome> {
  const conflict = referenciaConflict(req, huella, stored);
  if (conflict) return { error: conflict };
  const venta = await findVenta(db, empresaId, stored.id);
  if (!venta) throw new Error(`Venta ${stored.id} vanished after it was written`);
  return { venta, idempotent: true };
}

async function settleOutcome(run: () => Promise<VentaOutcome>): Promise<VentaOutcome> {
  try {
    return await run();
  } catch (error) {
    return { error };
  }
}

function planRefusal(planned: Extract<PlanResult, { ok: false }>): AppError {
  return AppError.rule(planned.reason, summaryMessage(planned.details), planned.details);
}

function creditRefusal(problem: string): AppError {
  return AppError.rule('limite_credito', problem, { id_cliente: [problem] });
}

function documentoRefusal(problem: string | undefined, plan: VentaPlan): AppError {
  const message = problem ?? `El tipo de documento ${plan.documento.id} no puede emitir la venta`;
  return AppError.rule('dato_relacionado_invalido', message, { id_documento: [message] });
}

/**
 * Inventory's refusal of a venta's reservation (nothing was taken), naming the venta's lines;
 * undefined for any other failure.
 */
function reserveRefusal(err: unknown, plan: VentaPlan): AppError | undefined {
  if (!isAppError(err) || (err.code !== 'BUSINESS_RULE' && err.code !== 'VALIDATION_FAILED')) return undefined;
  const details = remapReserveDetails(
    err.details,
    plan.stockLines.map((l) => [l.index]),
  );
  return AppError.rule(err.reason, Object.keys(details).length > 0 ? summaryMessage(details) : err.message, details);
}

/** The reservation a venta asks inventory for, under its key and the cause naming its id. */
function reservaOf({ req, plan }: Planned, { id, clave }: Reserva) {
  return {
    clave,
    origen: 'venta' as const,
    causa: ventaStockCause({ id, origen: req.origen, referencia_externa: plan.referencia }),
    id_bodega: plan.bodega.id,
    ...(req.permitir_sin_stock !== undefined ? { permitir_sin_stock: req.permitir_sin_stock } : {}),
    lineas: plan.stockLines.map((l) => ({ id_producto: l.producto.id, cantidad: l.cantidad })),
  };
}

/** The columns of a venta to write, but those its document type's number decides. */
function ventaColumns({ plan, draft, req, huella }: Planned, clave: string | null, emitidoEn: Date) {
  return {
    ...plannedVentaColumns(plan, draft),
    empresa_id: plan.empresaId,
    usuario_id: plan.usuario.id,
    referencia_externa: plan.referencia,
    origen: req.origen,
    nombre_usuario: plan.usuario.nombre,
    nombre_vendedor: null,
    clave_reserva: clave,
    huella,
    stock_devuelto_at: null,
    created_at: emitidoEn,
    updated_at: emitidoEn,
  };
}

function detallesOf(plan: VentaPlan, emitidoEn: Date) {
  return plan.lines.map((l) => ({ ...detalleColumns(l, plan.empresaId), created_at: emitidoEn, updated_at: emitidoEn }));
}

/** The undo of reservations whose ventas did not commit; if inventory cannot be reached now, its sweeper releases them later. */
async function releaseAll(bus: Bus, inventory: InventoryPort, reservas: readonly Reserva[], ctx: TenantContext): Promise<void> {
  await Promise.all(
    reservas.map(async ({ clave }) => {
      try {
        await inventory.release(ctx, { clave });
      } catch (err) {
        bus.logger.warn({ err, clave }, 'release of a failed venta’s reservation failed; the sweeper will release it');
      }
    }),
  );
}
