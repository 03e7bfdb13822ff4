import type { Row } from '../schema-clients';
import { inPages, olderThan, type Check } from './check';
import { show, units } from './quantities';

export const oneSalePerReference: Check = {
  name: 'no reference or platform order has two sales',
  run: async (q, e) => {
    const rows = await q(
      `select referencia_externa, array_agg(id order by id) as ids from sales.ventas where empresa_id = $1 and referencia_externa is not null group by 1 having count(*) > 1`,
      [e.id],
    );
    const [{ n }] = (await q('select count(*)::int as n from sales.ventas where empresa_id = $1 and referencia_externa is not null', [
      e.id,
    ])) as [Row];
    return { checked: n, violations: rows.map((r) => `empresa ${e.id} ${r.referencia_externa}: sales ${r.ids.join(', ')}`) };
  },
};

export const saleCorrelatives: Check = {
  name: 'sale correlatives are unique and gapless per document type',
  run: async (q, e, o) => {
    const rows = await q(
      `select d.id, d.nombre, d.correlativo as siguiente, count(v.id)::int as n, count(distinct v.numero)::int as distintos, min(v.numero) as min, max(v.numero) as max,
              count(*) filter (where v.correlativo <> d.prefijo || v.numero::text)::int as mal_formados
       from sales.documentos d left join sales.ventas v on coalesce(v.documento_emisor_id, v.documento_id) = d.id
       where d.empresa_id = $1 group by d.id order by d.id`,
      [e.id],
    );
    const violations: string[] = [];
    for (const d of rows) {
      const initial: number | undefined = o.initialCorrelatives?.[d.nombre];
      // From the known start, every number up to the counter was issued once; without it, the numbers issued run without a gap up to the counter.
      const gapless =
        initial !== undefined
          ? d.n === d.siguiente - initial && (d.n === 0 || (d.distintos === d.n && d.min === initial && d.max === d.siguiente - 1))
          : d.n === 0 || (d.distintos === d.n && d.max === d.siguiente - 1 && d.max - d.min + 1 === d.n);
      if (!gapless || d.mal_formados > 0)
        violations.push(
          `documento ${d.id} ${d.nombre} (empresa ${e.id}): ${d.n} sales, ${d.distintos} distinct numbers ${d.min}..${d.max}, counter at ${d.siguiente}, ${d.mal_formados} malformed`,
        );
    }
    return { checked: rows.reduce((s, d) => s + d.n, 0), violations };
  },
};

export const returnsCountedBySales: Check = {
  name: 'each sale counts its active returns and their amount',
  run: async (q, e, o) => {
    const violations: string[] = [];
    const checked = await inPages(
      q,
      'sales.ventas',
      e.id,
      o.pageSize,
      async (ids) => {
        const counted = await q(
          `select id, devoluciones_activas as n, monto_devuelto::text as monto from sales.ventas where empresa_id = $1 and id = any($2) and (devoluciones_activas <> 0 or monto_devuelto <> 0)`,
          [e.id, ids],
        );
        const actual = await q(
          `select venta_id, count(*) filter (where enable)::int as n, coalesce(sum(total) filter (where enable), 0)::text as monto, bool_or(updated_at > ${olderThan(o.inFlightMs)}) as reciente
           from returns.devoluciones where empresa_id = $1 and venta_id = any($2) group by 1`,
          [e.id, ids],
        );
        const countedBy = new Map(counted.map((r) => [Number(r.id), r]));
        const actualBy = new Map(actual.map((r) => [Number(r.venta_id), r]));
        const ventas = new Set(countedBy.keys());
        for (const id of actualBy.keys()) ventas.add(id);
        for (const id of ventas) {
          // Its latest return's event may not have reached sales yet.
          if (actualBy.get(id)?.reciente) continue;
          const c = countedBy.get(id);
          const a = actualBy.get(id);
          if ((c?.n ?? 0) !== (a?.n ?? 0) || units(c?.monto) !== units(a?.monto)) {
            violations.push(
              `empresa ${e.id} venta ${id}: counts ${c?.n ?? 0} active returns for ${show(units(c?.monto))}, returns hold ${a?.n ?? 0} for ${show(units(a?.monto))}`,
            );
          }
        }
      },
      // Registrations still in flight are not counted against it.
      `not exists (select 1 from sales.devoluciones_registradas r where r.venta_id = sales.ventas.id and r.estado = 'registrada' and r.created_at > ${olderThan(o.inFlightMs)})`,
    );
    return { checked, violations };
  },
};

export const exactMoney: Check = {
  name: 'money is exact: total = sub_total + iva on every sale and line, and a sale sums its lines',
  run: async (q, e, o) => {
    const violations: string[] = [];
    // A range of ids and a lateral join per sale: one index scan of the page's lines.
    const checked = await inPages(q, 'sales.ventas', e.id, o.pageSize, async (_ids, { first, last }) => {
      const rows = await q(
        `select v.id, v.total <> v.sub_total + v.iva as venta, d.lineas, v.total <> d.t or v.sub_total <> d.s or v.iva <> d.i as suma
         from sales.ventas v cross join lateral (
           select sum(l.total) as t, sum(l.sub_total) as s, sum(l.iva) as i, array_agg(l.id order by l.id) filter (where l.total <> l.sub_total + l.iva) as lineas
           from sales.venta_detalles l where l.venta_id = v.id
         ) d
         where v.empresa_id = $1 and v.id between $2 and $3 and (v.total <> v.sub_total + v.iva or d.lineas is not null or v.total <> d.t or v.sub_total <> d.s or v.iva <> d.i)`,
        [e.id, first, last],
      );
      for (const r of rows) {
        if (r.venta) violations.push(`empresa ${e.id} venta ${r.id}: total ≠ sub_total + iva`);
        for (const linea of r.lineas ?? []) violations.push(`empresa ${e.id} venta ${r.id} línea ${linea}: total ≠ sub_total + iva`);
        if (r.suma) violations.push(`empresa ${e.id} venta ${r.id}: amounts ≠ sum of its lines`);
      }
    });
    return { checked, violations };
  },
};
