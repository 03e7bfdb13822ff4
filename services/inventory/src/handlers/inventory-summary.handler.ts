import type { InventorySummary, TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { summarizeInventario } from '../db/producto-list.repository';
import type { InventoryDb } from '../db/tables';

export function inventorySummaryHandler(db: Kysely<InventoryDb>) {
  return async (_request: Record<string, never>, ctx: TenantContext): Promise<InventorySummary> => {
    const { totals, categorias } = await summarizeInventario(db, ctx.empresa.id);
    return {
      productos: { total: totals.total, activos: totals.activos, inactivos: totals.inactivos },
      inventario: {
        stock_total: Number(totals.stock_total),
        valor_total: Number(totals.valor_total),
        productos_con_stock: totals.con_stock,
        productos_sin_stock: totals.total - totals.con_stock,
        productos_stock_bajo: totals.stock_bajo,
      },
      productos_por_categoria: categorias,
    };
  };
}
