import { TIPOS_DEVOLUCION, type TipoDevolucion } from '@erp/contracts';
import { summarizeDocuments } from '@erp/contracts';

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
  const s = summarizeDocuments(
    rows.map((r) => ({ ...r, grupo: r.tipo })),
    TIPOS_DEVOLUCION,
  );
  return {
    cantidad_devoluciones: s.cantidad,
    total_devuelto: s.total,
    total_iva: s.iva,
    total_descuentos: s.descuentos,
    promedio_devolucion: s.promedio,
    devoluciones_por_tipo: s.grupos.map(({ grupo, cantidad, total }) => ({ tipo: grupo, cantidad, total })),
  };
}
