import type { EstadoVenta } from '@erp/contracts';
import { Decimal, cents, sum } from './money';

export interface EstadoTotals {
  estado: EstadoVenta;
  cantidad: number;
  /** Exact decimal strings (sums of numeric columns). */
  total: string;
  iva: string;
  descuento: string;
}

/**
 * The sales summary from per-state sums: totals are the sums of the states, the average is
 * total / count to the cent (0 without sales), and every state asked for is listed, with zeros
 * when it has no sales, in the order of `estados`.
 */
export function summarize(rows: readonly EstadoTotals[], estados: readonly EstadoVenta[]) {
  const cantidad = rows.reduce((n, r) => n + r.cantidad, 0);
  const total = sum(rows.map((r) => r.total));
  return {
    cantidad_ventas: cantidad,
    total_ventas: cents(total),
    total_iva: cents(sum(rows.map((r) => r.iva))),
    total_descuentos: cents(sum(rows.map((r) => r.descuento))),
    promedio_venta: cantidad === 0 ? '0.00' : cents(total.div(cantidad)),
    ventas_por_estado: estados.map((estado) => {
      const row = rows.find((r) => r.estado === estado);
      return { estado, cantidad: row?.cantidad ?? 0, total: cents(row ? new Decimal(row.total) : 0) };
    }),
  };
}
