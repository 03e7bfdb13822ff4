import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { enqueueEvent, type Bus } from '@erp/bus';
import {
  AppError,
  isAppError,
  Sale,
  salesEvents,
  type CausaStock,
  type ParsedRequestOf,
  type SaleInput,
  type TenantContext,
  type salesApiSubjects,
} from '@erp/contracts';
import { inTransaction, isUniqueViolation } from '@erp/db';
import { findCliente, findDocumento, pendingBalance } from '../db/catalog.repository';
import type { SalesDb } from '../db/tables';
import { REFERENCIA_INDEX, issueVenta, lockReferencia, nextVentaId, type DetalleToIssue, type VentaToIssue } from '../db/venta.repository';
import { findVenta, findVentaReferenciada, type VentaReferenciada } from '../db/venta-read.repository';
import { huellaOf, referenciaConflict } from '../domain/huella';
import { createDraft, planDraft, saleDocument, type PlanResult, type SaleDraft, type SalePlan } from '../domain/sale-plan';
import { creditProblem, documentoProblem, remapReserveDetails, summaryMessage } from '../domain/sale-rules';
import { saleStockCause } from '../domain/stock-lines';
import { detalleColumns, plannedVentaColumns } from '../domain/venta-row';
import { busInventory, type InventoryPort } from '../ports/inventory.port';
import { resolveReferences } from './sale-references.flow';

export type CreateRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.create'>;

export interface CreateSaleDeps {
  db: Kysely<SalesDb>;
  bus: Bus;
  /** Inventory as the flow reaches it; over `bus` unless given. */
  inventory?: InventoryPort;
  /** Called after a sale commits (nudges the outbox relay). */
  onCommitted?: () => void;
  /** Called as the pipeline passes its stages (the chaos tests' fault points). */
  after?: CreateStageHooks;
}

/** The stages of the pipeline a caller may hear of: stock reserved, sales committed. */
export interface CreateStageHooks {
  reserved?: () => void;
  committed?: () => void;
}

/** Where the reservation of the sale being created stands, for the undo on failure. */
type ReserveState = 'none' | 'attempted' | 'refused' | 'taken';

/**
 * The invoicing pipeline of `POST /sales`, of platform orders and of the fixture loader:
 * resolve and check → tax → take the sale's id and reserve the stock under it (inventory; inside
 * the transaction, after the reference's lock, when the sale has a reference) → one transaction that checks the customer's
 * credit, then takes the next correlative and writes the sale, its lines and the created event
 * → reply. The document type's row is locked last, so sales of one type wait on
 * each other for two statements and the commit only. A failure after the reservation releases
 * it (the undo); a crash there leaves it to inventory's sweeper, which asks `sales.sale.exists`.
 */
export async function createSale(
  deps: CreateSaleDeps,
  req: CreateRequest,
  ctx: TenantContext,
): Promise<{ venta: SaleInput; idempotent: boolean }> {
  const { db } = deps;
  const inventory = deps.inventory ?? busInventory(deps.bus);
  const empresaId = ctx.empresa.id;
  const referencia = req.referencia_externa ?? req.referencia ?? null;
  const huella = huellaOf(req);
  const existing = (venta: VentaReferenciada) => answerStored(db, empresaId, req, huella, venta);
  if (referencia) {
    const venta = await findVentaReferenciada(db, empresaId, referencia);
    if (venta !== undefined) return existing(venta);
  }

  const draft = createDraft(req, ctx);
  const planned = planDraft(draft, ctx, await resolveReferences(db, inventory, draft, ctx));
  if (!planned.ok) throw planRefusal(planned);
  const plan = planned.plan;
  if (plan.estado === 'Pendiente' && plan.cliente) {
    // Checked again under the customer's lock in the transaction; this spares a reservation.
    const problem = creditProblem(plan.cliente, await pendingBalance(db, empresaId, plan.cliente.id), plan.payment.saldo);
    if (problem) throw AppError.rule('limite_credito', problem, { id_cliente: [problem] });
  }

  const result = await commitSale(deps, inventory, plan, draft, req, huella, ctx);
  if ('winner' in result) return existing(result.winner);
  deps.onCommitted?.();
  return { venta: result.venta, idempotent: false };
}

/**
 * The answer to a request whose reference names a stored sale: that sale even if its products or
 * stock changed since; a partner's request with another body is refused, never answered as if it
 * had been booked.
 */
export async function answerStored(
  db: Kysely<SalesDb>,
  empresaId: number,
  req: CreateRequest,
  huella: string,
  stored: VentaReferenciada,
): Promise<{ venta: SaleInput; idempotent: true }> {
  const conflict = referenciaConflict(req, huella, stored);
  if (conflict) throw conflict;
  const venta = await findVenta(db, empresaId, stored.id);
  if (!venta) throw new Error(`Sale ${stored.id} vanished after it was written`);
  return { venta, idempotent: true };
}

/** The refusal of a sale whose plan found problems. */
export function planRefusal(planned: Extract<PlanResult, { ok: false }>): AppError {
  return AppError.rule(planned.reason, summaryMessage(planned.details), planned.details);
}

/** The columns of a sale to write, but those its document type's number decides. */
export function ventaColumns(
  plan: SalePlan,
  draft: SaleDraft,
  req: CreateRequest,
  huella: string,
  clave: string | null,
  emitidoEn: Date,
): Omit<VentaToIssue, 'documento'> {
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

/** The lines of a sale to write. */
export function detallesToIssue(plan: SalePlan, emitidoEn: Date): DetalleToIssue[] {
  return plan.lines.map((l) => ({ ...detalleColumns(l, plan.empresaId), created_at: emitidoEn, updated_at: emitidoEn }));
}

/** The reservation a sale asks inventory for, under its key and cause. */
export function reservaOf(plan: SalePlan, clave: string, causa: CausaStock, permitirSinStock: boolean | undefined) {
  return {
    clave,
    origen: 'venta' as const,
    causa,
    id_bodega: plan.bodega.id,
    ...(permitirSinStock !== undefined ? { permitir_sin_stock: permitirSinStock } : {}),
    lineas: plan.stockLines.map((l) => ({ id_producto: l.producto.id, cantidad: l.cantidad })),
  };
}

/**
 * Inventory's refusal of a sale's reservation (nothing was taken), naming the sale's lines;
 * undefined for any other failure.
 */
export function reserveRefusal(err: unknown, plan: SalePlan): AppError | undefined {
  if (!isAppError(err) || (err.code !== 'BUSINESS_RULE' && err.code !== 'VALIDATION_FAILED')) return undefined;
  const details = remapReserveDetails(
    err.details,
    plan.stockLines.map((l) => [l.index]),
  );
  return AppError.rule(err.reason, Object.keys(details).length > 0 ? summaryMessage(details) : err.message, details);
}

async function commitSale(
  deps: CreateSaleDeps,
  inventory: InventoryPort,
  plan: SalePlan,
  draft: SaleDraft,
  req: CreateRequest,
  huella: string,
  ctx: TenantContext,
): Promise<{ venta: SaleInput } | { winner: VentaReferenciada }> {
  const { db } = deps;
  const empresaId = plan.empresaId;
  const clave = plan.stockLines.length > 0 ? randomUUID() : null;
  // A sale that reserves stock takes its id first: the reservation's movements name it.
  let id: number | undefined;
  const state: { reserve: ReserveState } = { reserve: 'none' };
  const reserve = async (trx?: Transaction<SalesDb>) => {
    // Reserved once even if the transaction is retried: the key and the id stay the same.
    if (!clave || state.reserve === 'taken') return;
    id ??= await nextVentaId(trx ?? db);
    state.reserve = 'attempted';
    const causa = saleStockCause({ id, origen: req.origen, referencia_externa: plan.referencia });
    await reserveStock(inventory, trx, plan, clave, causa, req.permitir_sin_stock, ctx, state);
    state.reserve = 'taken';
    deps.after?.reserved?.();
  };
  try {
    // Without a reference nothing has to happen in the transaction before the stock is taken:
    // taken first, it holds no connection while inventory answers.
    if (!plan.referencia && !inventory.sharesTransaction) await reserve();
    return await inTransaction(db, async (trx) => {
      if (plan.referencia) {
        // Duplicates of the reference wait here for the first to commit, before reserving anything.
        await lockReferencia(trx, empresaId, plan.referencia);
        const winner = await findVentaReferenciada(trx, empresaId, plan.referencia);
        if (winner !== undefined) return { winner };
      }
      await reserve(trx);
      if (plan.estado === 'Pendiente' && plan.cliente) {
        const cliente = await findCliente(trx, empresaId, plan.cliente.id, { lock: true });
        const credit = cliente && creditProblem(cliente, await pendingBalance(trx, empresaId, cliente.id), plan.payment.saldo);
        if (credit) throw AppError.rule('limite_credito', credit, { id_cliente: [credit] });
      }

      const emitidoEn = new Date();
      const venta = await issueVenta(
        trx,
        {
          ...(id !== undefined ? { id } : {}),
          ...ventaColumns(plan, draft, req, huella, clave, emitidoEn),
          // The number and correlative are filled in by issueVenta from the locked document type.
          documento: saleDocument(plan, draft, ctx, { correlativo: '', numero: 0, emitido_en: emitidoEn.toISOString() }),
        },
        detallesToIssue(plan, emitidoEn),
      );
      if (!venta) {
        const problem =
          documentoProblem(await findDocumento(trx, empresaId, plan.documento.id), plan.documento.id, plan.sucursal.id, plan.estado) ??
          `El tipo de documento ${plan.documento.id} no puede emitir la venta`;
        throw AppError.rule('dato_relacionado_invalido', problem, { id_documento: [problem] });
      }
      await enqueueEvent(
        trx,
        salesEvents,
        'events.sales.sale.created',
        { empresa_id: empresaId, id_venta: venta.id, clave_reserva: clave, venta: Sale.parse(venta) },
        ctx,
      );
      return { venta };
    }).then((outcome) => {
      if ('venta' in outcome) deps.after?.committed?.();
      return outcome;
    });
  } catch (err) {
    if (clave && (state.reserve === 'attempted' || state.reserve === 'taken')) await releaseStock(deps.bus, inventory, clave, ctx);
    if (plan.referencia && isUniqueViolation(err, REFERENCIA_INDEX)) {
      const winner = await findVentaReferenciada(db, empresaId, plan.referencia);
      if (winner !== undefined) return { winner };
    }
    throw err;
  }
}

/** Takes the stock of the sale's product lines under its key; a refusal names the sale's lines. */
async function reserveStock(
  inventory: InventoryPort,
  trx: Transaction<SalesDb> | undefined,
  plan: SalePlan,
  clave: string,
  causa: CausaStock,
  permitirSinStock: boolean | undefined,
  ctx: TenantContext,
  state: { reserve: ReserveState },
) {
  try {
    await inventory.reserve(ctx, reservaOf(plan, clave, causa, permitirSinStock), trx);
  } catch (err) {
    const refusal = reserveRefusal(err, plan);
    // Refused whole: nothing was taken, so there is nothing to release.
    if (refusal) state.reserve = 'refused';
    throw refusal ?? err;
  }
}

/** The undo of the reservation; if inventory cannot be reached now, its sweeper releases it later. */
export async function releaseStock(bus: Bus, inventory: InventoryPort, clave: string, ctx: TenantContext): Promise<void> {
  try {
    await inventory.release(ctx, { clave });
  } catch (err) {
    bus.logger.warn({ err, clave }, 'release of a failed sale’s reservation failed; the sweeper will release it');
  }
}
