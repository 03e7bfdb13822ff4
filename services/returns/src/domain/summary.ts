import { TIPOS_DEVOLUCION, type TipoDevolucion } from '@erp/contracts';
import { Decimal, cents, sum } from '@erp/contracts';

export interface TipoTotals {
  tipo: TipoDevolucion;
  cantidad: number;
  /** Exact decimal strings (sums of numeric columns). */
  total: string;
  iva: string;
  descuento: string;
}

/**
 * The returns summary from per-type sums of active returns: totals are the sums of the types,
 * the average is total / count to the cent (0 without returns), and every type is listed, with
 * zeros when it has no returns, in the order of `TIPOS_DEVOLUCION`.
 */
export function summarize(rows: readonly TipoTotals[]) {
  const cantidad = rows.reduce((n, r) => n + r.cantidad, 0);
  const total = sum(rows.map((r) => r.total));
  return {
    cantidad_devoluciones: cantidad,
    total_devuelto: cents(total),
    total_iva: cents(sum(rows.map((r) => r.iva))),
    total_descuentos: cents(sum(rows.map((r) => r.descuento))),
    promedio_devolucion: cantidad === 0 ? '0.00' : cents(total.div(cantidad)),
    devoluciones_por_tipo: TIPOS_DEVOLUCION.map((tipo) => {
      const row = rows.find((r) => r.tipo === tipo);
      return { tipo, cantidad: row?.cantidad ?? 0, total: cents(row ? new Decimal(row.total) : 0) };
    }),
  };
}
