import type { Kysely, Transaction } from 'kysely';
import { enqueueEvent, type Bus } from '@erp/bus';
import {
  AppError,
  Sale,
  salesEvents,
  type ParsedRequestOf,
  type SaleInput,
  type TenantContext,
  type salesApiSubjects,
} from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { findCliente, pendingBalance } from '../db/catalog.repository';
import type { SalesDb } from '../db/tables';
import { lockVentaForEdit, replaceDetalles, saveEditedVenta } from '../db/venta.repository';
import { findVenta } from '../db/venta-read.repository';
import { planDraft, ventaDocument } from '../domain/venta-plan';
import { creditProblem, summaryMessage, takesStock } from '../domain/venta-rules';
import { documentoEmisor, mergeUpdate, needsCreditCheck, updateRefusal } from '../domain/venta-update';
import { heldStock, ventaStockCause, stockDiff } from '../domain/stock-lines';
import { detalleColumns, plannedVentaColumns } from '../domain/venta-row';
import { busInventory, type InventoryPort } from '../ports/inventory.port';
import { resolveReferences } from './venta-references.flow';
import { squareIfReturned } from './square-registrations.flow';
import { adjustStockRevision, trackedChange } from './stock-revision.flow';

type UpdateRequest = ParsedRequestOf<typeof salesApiSubjects, 'sales.update'>;

export interface UpdateVentaDeps {
  db: Kysely<SalesDb>;
  bus: Bus;
  /**
   * Inventory as reached from inside the update's transaction; over `bus` unless given (the
   * benchmark's baseline runs inventory's statements in that transaction).
   */
  inventoryIn?: (trx: Transaction<SalesDb>) => InventoryPort;
  /** Chaos-testing hook: called right after inventory applied the stock difference, before the commit. */
  afterAdjust?: () => void;
}

/**
 * `PUT /sales/{id}`, in one transaction that holds the sale's row lock from the first read to
 * the commit, so concurrent updates and an annulment of the same sale happen one after another
 * and each starts from what the previous one committed (no lost update, no double movement):
 * lock → refuse what cannot change → merge the changes into the stored sale → resolve, check and
 * tax it as on creation → check the customer's credit → move the stock difference under the
 * sale's next stock revision → write the sale, its lines and its document → commit. The undo of
 * the stock move is the revision itself: a change that dies after inventory applied it is
 * squared by the next one, or by the revision sweeper (`docs/stock-revisions.md`).
 */
export async function updateVenta(deps: UpdateVentaDeps, { id, cambios }: UpdateRequest, ctx: TenantContext): Promise<SaleInput> {
  const { db, bus } = deps;
  const empresaId = ctx.empresa.id;
  // Registrations of returns that never committed stop counting first; a return registers under
  // the lock taken below before it commits, so none slips in after the check.
  await squareIfReturned(db, bus, empresaId, id, ctx.requestId);
  return trackedChange(db, empresaId, id, (committed) =>
    inTransaction(db, async (trx) => {
      await committed(trx);
      const inventory = deps.inventoryIn?.(trx) ?? busInventory(bus);
      const venta = await lockVentaForEdit(trx, empresaId, id);
      if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
      const refusal = updateRefusal(venta);
      if (refusal) throw AppError.rule('estado_no_modificable', refusal.message, { [refusal.field]: [refusal.message] });

      const merged = mergeUpdate(venta, cambios, ctx.usuario ?? null);
      if (!merged.ok) throw AppError.rule('cuerpo_invalido', summaryMessage(merged.details), merged.details);
      const draft = merged.draft;
      const planned = planDraft(draft, ctx, await resolveReferences(db, inventory, draft, ctx, trx));
      if (!planned.ok) throw AppError.rule(planned.reason, summaryMessage(planned.details), planned.details);
      const plan = planned.plan;

      if (needsCreditCheck(venta, { estado: plan.estado, cliente_id: plan.cliente?.id ?? null, saldo: plan.payment.saldo })) {
        // Under the customer's lock, as on creation: two sales cannot both take the last of its credit.
        const cliente = await findCliente(trx, empresaId, plan.cliente!.id, { lock: true });
        const credit = cliente && creditProblem(cliente, await pendingBalance(trx, empresaId, cliente.id, venta.id), plan.payment.saldo);
        if (credit) throw AppError.rule('limite_credito', credit, { id_cliente: [credit] });
      }

      const before = heldStock(takesStock(venta.estado), venta.bodega_id, venta.lines);
      const after = heldStock(
        takesStock(plan.estado),
        plan.bodega.id,
        plan.lines.map((l) => ({ id_producto: l.producto.id, cantidad: l.cantidad, mueve_stock: l.mueve_stock })),
      );
      const revision = await adjustStockRevision(inventory, ctx, {
        ventaId: venta.id,
        revision: venta.revision_stock,
        moves: stockDiff(before, after),
        origen: 'actualizacion_venta',
        causa: ventaStockCause(venta),
        concepto: `Actualización de la venta ${venta.correlativo}`,
        linesOf: (move) =>
          move.id_bodega === plan.bodega.id ? plan.stockLines.filter((l) => l.producto.id === move.id_producto).map((l) => l.index) : [],
      });
      if (revision !== venta.revision_stock) deps.afterAdjust?.();

      const now = new Date();
      await saveEditedVenta(trx, venta.id, {
        ...plannedVentaColumns(plan, draft),
        documento_emisor_id: documentoEmisor(venta, plan.documento.id),
        nombre_documento: plan.documento.nombre,
        // Issued again with the same correlative: the document always matches the sale.
        documento: JSON.stringify(
          ventaDocument(plan, draft, ctx, {
            correlativo: venta.correlativo,
            numero: venta.numero,
            emitido_en: venta.created_at.toISOString(),
            actualizado_en: now.toISOString(),
          }),
        ),
        revision_stock: revision,
        updated_at: now,
      });
      await replaceDetalles(
        trx,
        venta.id,
        plan.lines.map((l) => ({ id: l.lineId, venta_id: venta.id, ...detalleColumns(l, empresaId), updated_at: now })),
      );
      const saved = await findVenta(trx, empresaId, venta.id);
      if (!saved) throw new Error(`Sale ${venta.id} vanished while it was locked`);
      await enqueueEvent(
        trx,
        salesEvents,
        'events.sales.sale.updated',
        { empresa_id: empresaId, id_venta: venta.id, venta: Sale.parse(saved) },
        ctx,
      );
      return saved;
    }),
  );
}
