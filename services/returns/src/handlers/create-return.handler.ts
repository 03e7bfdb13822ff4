import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { enqueueEvent, type Bus } from '@erp/bus';
import {
  AppError,
  DEFAULT_RETURN_DOCUMENT,
  MEDIDA_UNIDAD,
  Return,
  inventorySubjects,
  returnsEvents,
  salesForReturnsSubjects,
  type ParsedRequestOf,
  type ReplyInputOf,
  type RequestContext,
  type ReturnableSale,
  type TenantContext,
  type returnsAdminSubjects,
} from '@erp/contracts';
import { inTransaction, isUniqueViolation } from '@erp/db';
import { advanceSeries, lockSeries } from '../db/documento.repository';
import { REFERENCIA_INDEX, findIdByReferencia, findReturn, insertDetalles, insertDevolucion, lockVentaReturns, returnedByLine } from '../db/devolucion.repository';
import type { ReturnsDb } from '../db/tables';
import { planReturn, saleProblem } from '../domain/return-plan';
import { settleStock } from '../stock/settle-stock';

type CreateRequest = ParsedRequestOf<typeof returnsAdminSubjects, 'returns.admin.create'>;
type CreateReply = ReplyInputOf<typeof returnsAdminSubjects, 'returns.admin.create'>;

export interface CreateReturnDeps {
  db: Kysely<ReturnsDb>;
  bus: Bus;
  /** Called after a return commits (nudges the outbox relay). */
  onCommitted?: () => void;
}

/** Who made a back-office return when the request names nobody. */
export const BACK_OFFICE_USER = 'Administración';

/**
 * Creates a return: the sale (asked of sales) and its products' brands (of inventory) first;
 * then one transaction under the sale's lock that reads what active returns already took,
 * plans the lines (refusing an over-return with nothing changed), takes the next number of the
 * series and writes the return, its lines and the created event; then the stock goes back
 * through inventory under the key chosen before the transaction. If inventory cannot be reached
 * then, the return stands and the consumer of its event puts the stock back later.
 */
export function createReturnHandler(deps: CreateReturnDeps) {
  const { db, bus } = deps;
  const returnOf = async (empresaId: number, id: number) => {
    const devolucion = await findReturn(db, empresaId, id);
    if (!devolucion) throw new Error(`Return ${id} vanished after it was written`);
    return devolucion;
  };

  return async (req: CreateRequest, reqCtx: RequestContext): Promise<CreateReply> => {
    const empresaId = req.empresa_id;
    if (req.referencia) {
      const id = await findIdByReferencia(db, empresaId, req.referencia);
      if (id !== undefined) return { devolucion: await returnOf(empresaId, id), idempotent: true };
    }
    const ctx: TenantContext = {
      requestId: reqCtx.requestId,
      empresa: reqCtx.empresa?.id === empresaId ? reqCtx.empresa : { id: empresaId, nombre: '', iva: '13', venderSinStock: true },
      usuario: req.usuario ?? null,
    };
    const venta = await bus.request(salesForReturnsSubjects, 'sales.sale.returnable', { id_venta: req.id_venta }, ctx);
    const problem = saleProblem(venta.estado);
    if (problem) throw AppError.rule(problem, { id_venta: [problem] });
    const marcas = await brandsOf(bus, venta, ctx);
    // Chosen before the transaction: a retried transaction keeps it, so inventory still applies it once.
    const clave = `devolucion-${randomUUID()}`;

    let outcome: { id: number } | { winner: number };
    try {
      outcome = await inTransaction(db, async (trx) => {
        await lockVentaReturns(trx, empresaId, venta.id);
        if (req.referencia) {
          const winner = await findIdByReferencia(trx, empresaId, req.referencia);
          if (winner !== undefined) return { winner };
        }
        const planned = planReturn({ tipo: req.tipo, saleLines: venta.detalles, returned: await returnedByLine(trx, empresaId, venta.id), requested: req.detalles });
        if (!planned.ok) throw AppError.rule(planned.message, planned.details);
        const plan = planned.plan;

        const documento = req.documento ?? DEFAULT_RETURN_DOCUMENT;
        const series = await lockSeries(trx, empresaId, documento);
        await advanceSeries(trx, series.id, series.correlativo);
        const now = new Date();
        const id = await insertDevolucion(trx, {
          empresa_id: empresaId,
          venta_id: venta.id,
          bodega_id: venta.id_bodega,
          documento_id: series.id,
          numero: series.correlativo,
          correlativo: `${series.prefijo}${series.correlativo}`,
          fecha: req.fecha,
          tipo: req.tipo,
          referencia: req.referencia ?? null,
          observaciones: req.observaciones ?? null,
          ...plan.totals,
          anulada_at: null,
          usuario_id: req.usuario?.id ?? null,
          nombre_usuario: req.usuario?.nombre ?? BACK_OFFICE_USER,
          nombre_cliente: venta.nombre_cliente ?? 'Consumidor Final',
          nombre_documento: series.nombre,
          clave_stock: plan.stock.length > 0 ? clave : null,
          stock_aplicado_at: null,
          stock_revertido_at: null,
          created_at: now,
          updated_at: now,
        });
        await insertDetalles(
          trx,
          plan.lines.map((l, linea) => ({
            devolucion_id: id,
            empresa_id: empresaId,
            linea,
            venta_detalle_id: l.saleLine.id,
            id_producto: l.saleLine.id_producto,
            codigo_producto: l.saleLine.codigo ?? '',
            nombre_producto: l.saleLine.nombre_producto ?? '',
            marca_producto: marcas.get(l.saleLine.id_producto) ?? '',
            descripcion: l.saleLine.descripcion ?? '',
            medida: MEDIDA_UNIDAD,
            mueve_stock: l.mueve_stock,
            cantidad: l.cantidad,
            precio: l.precio,
            costo: l.costo,
            descuento: l.descuento,
            porcentaje_impuesto: l.porcentaje_impuesto,
            sub_total: l.sub_total,
            iva: l.iva,
            total: l.total,
            exenta: l.exenta,
            created_at: now,
            updated_at: now,
          })),
        );
        const devolucion = Return.parse(await findReturn(trx, empresaId, id));
        await enqueueEvent(trx, returnsEvents, 'events.returns.return.created', { empresa_id: empresaId, id_devolucion: id, id_venta: venta.id, total: plan.totals.total, devolucion }, ctx);
        return { id };
      });
    } catch (err) {
      if (req.referencia && isUniqueViolation(err, REFERENCIA_INDEX)) {
        const winner = await findIdByReferencia(db, empresaId, req.referencia);
        if (winner !== undefined) return { devolucion: await returnOf(empresaId, winner), idempotent: true };
      }
      throw err;
    }
    if ('winner' in outcome) return { devolucion: await returnOf(empresaId, outcome.winner), idempotent: true };

    deps.onCommitted?.();
    try {
      await settleStock(db, bus, empresaId, outcome.id, ctx);
    } catch (err) {
      bus.logger.warn({ err, empresaId, idDevolucion: outcome.id }, 'stock of a new return not put back yet; the consumer of its event will');
    }
    return { devolucion: await returnOf(empresaId, outcome.id), idempotent: false };
  };
}

/** Brands of the sale's products, from inventory (the sale lines do not keep them). */
async function brandsOf(bus: Bus, venta: ReturnableSale, ctx: TenantContext): Promise<Map<number, string>> {
  const ids = [...new Set(venta.detalles.map((d) => d.id_producto))];
  if (ids.length === 0) return new Map();
  const resolved = await bus.request(inventorySubjects, 'inventory.product.resolve', { items: ids.map((id_producto) => ({ id_producto })) }, ctx);
  const marcas = new Map<number, string>();
  for (const item of resolved.items) if (item.ok && item.producto.marca) marcas.set(item.producto.id, item.producto.marca);
  return marcas;
}
