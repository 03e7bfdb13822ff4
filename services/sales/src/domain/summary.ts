import type { EstadoVenta } from '@erp/contracts';
import { summarizeDocuments } from '@erp/contracts';

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
  const s = summarizeDocuments(
    rows.map((r) => ({ ...r, grupo: r.estado })),
    estados,
  );
  return {
    cantidad_ventas: s.cantidad,
    total_ventas: s.total,
    total_iva: s.iva,
    total_descuentos: s.descuentos,
    promedio_venta: s.promedio,
    ventas_por_estado: s.grupos.map(({ grupo, cantidad, total }) => ({ estado: grupo, cantidad, total })),
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
