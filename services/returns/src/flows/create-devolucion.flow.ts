import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { enqueueEvent, type Bus, type Logger } from '@erp/bus';
import {
  AppError,
  DEFAULT_RETURN_DOCUMENT,
  Return,
  returnsEvents,
  type ParsedRequestOf,
  type ReplyInputOf,
  type RequestContext,
  type ReturnableSale,
  type TenantContext,
  type returnsAdminSubjects,
} from '@erp/contracts';
import { inTransaction, isUniqueViolation } from '@erp/db';
import { advanceCorrelativo, lockDocumento } from '../db/documento.repository';
import { REFERENCIA_INDEX, insertDetalles, insertDevolucion, lockVentaDevoluciones } from '../db/devolucion.repository';
import { findDevolucion, findDevolucionIdByReferencia, devueltoByDetalle } from '../db/devolucion-read.repository';
import type { ReturnsDb } from '../db/tables';
import { detalleColumns, devolucionColumns } from '../domain/devolucion-row';
import { planDevolucion, ventaProblem } from '../domain/return-plan';
import { busInventory, type InventoryPort } from '../ports/inventory.port';
import { busSales, type SalesPort } from '../ports/sales.port';
import { settleStock } from './settle-stock.flow';

export type CreateRequest = ParsedRequestOf<typeof returnsAdminSubjects, 'returns.admin.create'>;
type CreateReply = ReplyInputOf<typeof returnsAdminSubjects, 'returns.admin.create'>;

export interface CreateDevolucionDeps {
  db: Kysely<ReturnsDb>;
  bus: Bus;
  /** Called after a return commits (nudges the outbox relay). */
  onCommitted?: () => void;
}

/**
 * Creates a return: the sale (asked of sales) and its products' brands (of inventory) first;
 * then one transaction under this service's lock of the sale that registers the return with the
 * sale (`sales.sale.return.register`, under the sale's row lock in sales: from then on an
 * annulment or an update of the sale's lines is refused, and the lines answered are what the sale
 * holds now), reads what active returns already took, plans the lines (refusing an over-return
 * with nothing changed), takes the next number of the series and writes the return, its lines and
 * the created event; then the stock goes back through inventory under the key chosen before the
 * transaction. If inventory cannot be reached then, the return stands and the consumer of its
 * event puts the stock back later. A return that registered and then failed asks sales to square
 * the sale's registrations, so the sale stops counting it.
 */
export async function createDevolucion(deps: CreateDevolucionDeps, req: CreateRequest, reqCtx: RequestContext): Promise<CreateReply> {
  const { db, bus } = deps;
  const sales = busSales(bus);
  const inventory = busInventory(bus);
  const devolucionOf = async (empresaId: number, id: number) => {
    const devolucion = await findDevolucion(db, empresaId, id);
    if (!devolucion) throw new Error(`Return ${id} vanished after it was written`);
    return devolucion;
  };

  const empresaId = req.empresa_id;
  if (req.referencia) {
    const id = await findDevolucionIdByReferencia(db, empresaId, req.referencia);
    if (id !== undefined) return { devolucion: await devolucionOf(empresaId, id), idempotent: true };
  }
  const ctx: TenantContext = {
    requestId: reqCtx.requestId,
    empresa: reqCtx.empresa?.id === empresaId ? reqCtx.empresa : { id: empresaId, nombre: '', iva: '13', venderSinStock: true },
    usuario: req.usuario ?? null,
  };
  const venta = await sales.returnable(ctx, { id_venta: req.id_venta });
  const problem = ventaProblem(venta.estado);
  if (problem) throw AppError.rule('estado_no_modificable', problem, { id_venta: [problem] });
  let marcas = await marcasOf(inventory, venta, ctx);
  // Chosen before the transaction: a retried transaction keeps it, so inventory still applies it
  // once and the sale counts its registration once.
  const clave = `devolucion-${randomUUID()}`;
  let registered = false;

  let outcome: { id: number } | { winner: number };
  try {
    outcome = await inTransaction(db, async (trx) => {
      await lockVentaDevoluciones(trx, empresaId, venta.id);
      if (req.referencia) {
        const winner = await findDevolucionIdByReferencia(trx, empresaId, req.referencia);
        if (winner !== undefined) return { winner };
      }
      registered = true;
      const registrada = await sales.register(ctx, { id_venta: venta.id, clave });
      const problemNow = ventaProblem(registrada.estado);
      if (problemNow) throw AppError.rule('estado_no_modificable', problemNow, { id_venta: [problemNow] });
      if (registrada.detalles.some((d) => !venta.detalles.some((v) => v.id_producto === d.id_producto)))
        marcas = await marcasOf(inventory, registrada, ctx);
      const planned = planDevolucion({
        tipo: req.tipo,
        detallesVenta: registrada.detalles,
        returned: await devueltoByDetalle(trx, empresaId, venta.id),
        requested: req.detalles,
      });
      if (!planned.ok) throw AppError.rule('regla_de_negocio', planned.message, planned.details);
      const plan = planned.plan;

      const documento = await lockDocumento(trx, empresaId, req.documento ?? DEFAULT_RETURN_DOCUMENT);
      await advanceCorrelativo(trx, documento.id, documento.correlativo);
      const now = new Date();
      const id = await insertDevolucion(trx, {
        ...devolucionColumns({ empresaId, venta: registrada, documento, request: req, plan, clave }),
        created_at: now,
        updated_at: now,
      });
      await insertDetalles(
        trx,
        plan.lines.map((l, linea) => ({
          devolucion_id: id,
          ...detalleColumns(l, linea, empresaId, marcas.get(l.detalleVenta.id_producto)),
          created_at: now,
          updated_at: now,
        })),
      );
      const devolucion = Return.parse(await findDevolucion(trx, empresaId, id));
      await enqueueEvent(
        trx,
        returnsEvents,
        'events.returns.return.created',
        { empresa_id: empresaId, id_devolucion: id, id_venta: venta.id, total: plan.totals.total, clave_registro: clave, devolucion },
        ctx,
      );
      return { id };
    });
  } catch (err) {
    if (registered) await squareRegistrations(sales, bus.logger, venta.id, ctx);
    if (req.referencia && isUniqueViolation(err, REFERENCIA_INDEX)) {
      const winner = await findDevolucionIdByReferencia(db, empresaId, req.referencia);
      if (winner !== undefined) return { devolucion: await devolucionOf(empresaId, winner), idempotent: true };
    }
    throw err;
  }
  if ('winner' in outcome) return { devolucion: await devolucionOf(empresaId, outcome.winner), idempotent: true };

  deps.onCommitted?.();
  try {
    await settleStock(db, bus, empresaId, outcome.id, ctx);
  } catch (err) {
    bus.logger.warn({ err, empresaId, idDevolucion: outcome.id }, 'stock of a new return not put back yet; the consumer of its event will');
  }
  return { devolucion: await devolucionOf(empresaId, outcome.id), idempotent: false };
}

/** Asks sales to stop counting a registration whose return did not commit; if sales cannot be reached, its next annulment or update does it. */
async function squareRegistrations(sales: SalesPort, logger: Logger, ventaId: number, ctx: TenantContext): Promise<void> {
  try {
    await sales.square(ctx, { id_venta: ventaId });
  } catch (err) {
    logger.warn({ err, idVenta: ventaId }, 'registration of a failed return not squared yet; the sale squares it on its next change');
  }
}

/** Brands of the sale's products, from inventory (the sale lines do not keep them). */
async function marcasOf(inventory: InventoryPort, venta: ReturnableSale, ctx: TenantContext): Promise<Map<number, string>> {
  const ids = [...new Set(venta.detalles.map((d) => d.id_producto))];
  if (ids.length === 0) return new Map();
  const resolved = await inventory.resolve(ctx, { items: ids.map((id_producto) => ({ id_producto })) });
  const marcas = new Map<number, string>();
  for (const item of resolved.items) if (item.ok && item.producto.marca) marcas.set(item.producto.id, item.producto.marca);
  return marcas;
}
