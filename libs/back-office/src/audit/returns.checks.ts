import { inPages, type Check } from './check';
import { show, units } from './quantities';

export const returnCorrelatives: Check = {
  name: 'return correlatives are unique and gapless per document type',
  run: async (q, e) => {
    const rows = await q(
      `select d.id, d.nombre, d.correlativo as siguiente, count(v.id)::int as n, count(distinct v.numero)::int as distintos, min(v.numero) as min, max(v.numero) as max
       from returns.documentos d left join returns.devoluciones v on v.documento_id = d.id where d.empresa_id = $1 group by d.id order by d.id`,
      [e.id],
    );
    const violations = rows
      .filter((d) => d.n > 0 && (d.n !== d.distintos || d.max - d.min + 1 !== d.n || d.max !== d.siguiente - 1))
      .map(
        (d) =>
          `documento ${d.id} ${d.nombre} (empresa ${e.id}): ${d.n} returns, ${d.distintos} distinct numbers ${d.min}..${d.max}, counter at ${d.siguiente}`,
      );
    return { checked: rows.reduce((s, d) => s + d.n, 0), violations };
  },
};

export const returnsWithinSales: Check = {
  // What a line holds is what it took from stock: its quantity rounded to the stock's 3 decimals.
  name: 'active returns never give back more than the sale still holds, per sale line',
  run: async (q, e, o) => {
    const violations: string[] = [];
    const checked = await inPages(
      q,
      'returns.devoluciones',
      e.id,
      o.pageSize,
      async (ids) => {
        const returned = await q(
          `select d.venta_id, l.venta_detalle_id, sum(l.cantidad)::numeric(24, 4)::text as cantidad, array_agg(distinct d.id) as devoluciones
           from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id
           where d.empresa_id = $1 and d.id = any($2) and d.enable and l.mueve_stock group by 1, 2`,
          [e.id, ids],
        );
        if (returned.length === 0) return;
        // The whole of each sale line's active returns, not only this page's.
        const all = await q(
          `select l.venta_detalle_id, sum(l.cantidad)::numeric(24, 4)::text as cantidad
           from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id
           where d.empresa_id = $1 and d.enable and l.mueve_stock and l.venta_detalle_id = any($2) group by 1`,
          [e.id, returned.map((r) => r.venta_detalle_id)],
        );
        const held = await q(
          `select d.id, d.venta_id, v.estado, case when v.estado in ('Completada', 'Pendiente') then round(d.cantidad, 3) else 0 end::numeric(24, 4)::text as cantidad
           from sales.venta_detalles d join sales.ventas v on v.id = d.venta_id where v.empresa_id = $1 and d.id = any($2)`,
          [e.id, returned.map((r) => r.venta_detalle_id)],
        );
        const heldBy = new Map(held.map((h) => [Number(h.id), h]));
        const totalBy = new Map(all.map((r) => [Number(r.venta_detalle_id), String(r.cantidad)]));
        for (const r of returned) {
          const line = heldBy.get(Number(r.venta_detalle_id));
          const total = totalBy.get(Number(r.venta_detalle_id));
          if (units(total) > units(line?.cantidad)) {
            violations.push(
              `empresa ${e.id} venta ${r.venta_id} (${line?.estado ?? 'missing'}) línea ${r.venta_detalle_id}: active returns ${r.devoluciones.join(', ')} gave back ${show(units(total))}, the sale holds ${show(units(line?.cantidad))}`,
            );
          }
        }
      },
      'enable',
    );
    return { checked, violations: [...new Set(violations)] };
  },
};
