import type { EstadoVenta } from '@erp/contracts';
import { Decimal, cents, sum } from '@erp/contracts';

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

export interface DayCount {
  /** `YYYY-MM-DD`. */
  fecha: string;
  cantidad: number;
}

/**
 * Where a page of a list ordered by date starts, from the count of sales of each day (in the
 * list's order, days without sales left out): the day of the page's first sale and how many of
 * that day's sales, in the list's order, come before it. `start` is undefined past the last sale.
 * Skipping whole days by their counts replaces an OFFSET over every earlier sale by one over
 * part of a day.
 */
export function pageStart(days: readonly DayCount[], offset: number): { total: number; start?: { fecha: string; skip: number } } {
  let before = 0;
  let start: { fecha: string; skip: number } | undefined;
  for (const day of days) {
    if (start === undefined && before + day.cantidad > offset) start = { fecha: day.fecha, skip: offset - before };
    before += day.cantidad;
  }
  return start ? { total: before, start } : { total: before };
}
