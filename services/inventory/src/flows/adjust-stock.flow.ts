import { AppError, type ParsedRequestOf, type ReplyInputOf, type inventorySubjects } from '@erp/contracts';
import type { Transaction } from 'kysely';
import { findAjuste, insertAjuste, recordAjusteMovimientos } from '../db/ajuste.repository';
import { applyMoves, companyBodegaIds, findStockProductos, lockStock, lockedStockOf } from '../db/stock.repository';
import type { AjusteMovimiento, InventoryDb } from '../db/tables';
import { planAjuste, shortfallDetails, type AjusteLine } from '../domain/stock-plan';

type AdjustRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.stock.adjust'>;
type AdjustReply = ReplyInputOf<typeof inventorySubjects, 'inventory.stock.adjust'>;

/**
 * Applies relative or absolute stock changes under a key, all or nothing, in the caller's
 * transaction. A key seen before answers its recorded movements and moves nothing. Services
 * have no stock: their lines are accepted and ignored.
 */
export async function adjustStock(
  trx: Transaction<InventoryDb>,
  req: AdjustRequest,
  options: { empresaId: number; allowNegative: boolean },
): Promise<AdjustReply> {
  const { empresaId } = options;
  const replayed = await findAjuste(trx, empresaId, req.clave);
  if (replayed) return { clave: req.clave, aplicado: false, movimientos: replayed.movimientos };

  const productos = await findStockProductos(
    trx,
    empresaId,
    req.lineas.map((l) => l.id_producto),
  );
  const bodegas = await companyBodegaIds(
    trx,
    empresaId,
    req.lineas.map((l) => l.id_bodega),
  );
  const details: Record<string, string[]> = {};
  const seen = new Set<string>();
  req.lineas.forEach((linea, i) => {
    if (!productos.has(linea.id_producto)) (details[`lineas.${i}.id_producto`] ??= []).push(`El producto ${linea.id_producto} no existe`);
    if (!bodegas.has(linea.id_bodega)) (details[`lineas.${i}.id_bodega`] ??= []).push(`La bodega ${linea.id_bodega} no existe`);
    const key = `${linea.id_producto}:${linea.id_bodega}`;
    if (seen.has(key)) (details[`lineas.${i}`] ??= []).push('El producto y la bodega ya aparecen en otra línea');
    seen.add(key);
  });
  if (Object.keys(details).length > 0)
    throw AppError.validation(
      'El ajuste tiene datos inválidos',
      details,
      Object.keys(details).some((field) => field.endsWith('.id_producto')) ? 'producto_no_encontrado' : 'dato_relacionado_invalido',
    );

  const inserted = await insertAjuste(trx, {
    empresaId,
    clave: req.clave,
    origen: req.origen,
    causa: req.causa,
    concepto: req.concepto ?? null,
  });
  if (!inserted) {
    const winner = (await findAjuste(trx, empresaId, req.clave))!;
    return { clave: req.clave, aplicado: false, movimientos: winner.movimientos };
  }

  const lineas: AjusteLine[] = req.lineas.flatMap((l, lineIndex) =>
    productos.get(l.id_producto)?.tipo === 'Producto'
      ? [{ productoId: l.id_producto, bodegaId: l.id_bodega, cantidad: l.cantidad, stock: l.stock, lineIndex }]
      : [],
  );
  const allowNegative = req.permitir_sin_stock ?? options.allowNegative;
  const locked = await lockStock(trx, empresaId, lineas, { create: true });
  const plan = planAjuste(lineas, lockedStockOf(locked), allowNegative);
  if (plan.shortfalls.length > 0) {
    throw AppError.rule(
      'stock_insuficiente',
      'Stock insuficiente y la empresa no permite vender sin stock',
      shortfallDetails(plan.shortfalls, (id) => productos.get(id)?.codigo ?? String(id)),
    );
  }
  const applied = await applyMoves(trx, empresaId, locked, plan.moves, {
    tipo: 'ajuste',
    origen: req.origen,
    causa: req.causa,
    clave: req.clave,
    concepto: req.concepto ?? null,
  });
  const movimientos: AjusteMovimiento[] = applied.map((m) => ({
    id_producto: m.productoId,
    id_bodega: m.bodegaId,
    cantidad: m.cantidad,
    stock_resultante: m.stockResultante,
  }));
  await recordAjusteMovimientos(trx, inserted.id, movimientos);
  return { clave: req.clave, aplicado: true, movimientos };
}
