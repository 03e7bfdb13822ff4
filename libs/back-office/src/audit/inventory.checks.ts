import type { Row } from '../schema-clients';
import { inPages, olderThan, type Check } from './check';
import { byProductWarehouse, differences } from './quantities';

/** Stock origins of the sales pipeline: the reservation of a sale, its updates by difference, its annulment. */
const SALE_ORIGINS = ['venta', 'actualizacion_venta', 'anulacion_venta'];
/** Origins that may take stock below zero even where the company forbids selling without it (DESIGN §4). */
const BELOW_ZERO_ORIGINS = ['webhook', 'anulacion_devolucion'];
const KNOWN_ORIGINS = [...SALE_ORIGINS, 'inventario', 'devolucion', 'anulacion_devolucion', 'webhook'];

export const stockMatchesLedger: Check = {
  name: 'stock of every product and warehouse equals the sum of its ledger movements',
  run: async (q, e) => {
    const rows = await q(
      `select coalesce(i.producto_id, m.producto_id) as producto_id, coalesce(i.bodega_id, m.bodega_id) as bodega_id, i.stock::text as stock, m.total::text as movimientos
       from (select * from inventory.inventarios where empresa_id = $1) i
       full join (select producto_id, bodega_id, sum(cantidad) as total from inventory.movimientos where empresa_id = $1 group by 1, 2) m on m.producto_id = i.producto_id and m.bodega_id = i.bodega_id
       where coalesce(i.stock, 0) <> coalesce(m.total, 0)`,
      [e.id],
    );
    const [{ n }] = (await q('select count(*)::int as n from inventory.inventarios where empresa_id = $1', [e.id])) as [Row];
    return {
      checked: n,
      violations: rows.map(
        (r) => `empresa ${e.id} producto ${r.producto_id} bodega ${r.bodega_id}: stock ${r.stock ?? 0}, ledger ${r.movimientos ?? 0}`,
      ),
    };
  },
};

export const saleMovements: Check = {
  // Stock has three decimals and a line's quantity up to four: inventory rounds each line half up (its documented rule).
  // A sale with no reservation and no stock revision never moved stock through the ledger (loaded
  // from before it, its stock effect is in the opening stock): it is left out.
  name: 'the movements of sales equal what live sales hold, per product and warehouse (each line rounded to the stock’s 3 decimals)',
  run: async (q, e) => {
    const held = await q(
      `select d.id_producto as producto_id, v.bodega_id, sum(round(d.cantidad, 3))::numeric(24, 4)::text as cantidad
       from sales.ventas v join sales.venta_detalles d on d.venta_id = v.id
       where v.empresa_id = $1 and v.estado in ('Completada', 'Pendiente') and d.mueve_stock and (v.clave_reserva is not null or v.revision_stock > 0) group by 1, 2`,
      [e.id],
    );
    const moved = await q(
      `select producto_id, bodega_id, (-sum(cantidad))::numeric(24, 4)::text as cantidad from inventory.movimientos where empresa_id = $1 and origen = any($2) group by 1, 2`,
      [e.id, SALE_ORIGINS],
    );
    const [{ n }] = (await q(
      `select count(*)::int as n from sales.venta_detalles d join sales.ventas v on v.id = d.venta_id
       where v.empresa_id = $1 and d.mueve_stock and (v.clave_reserva is not null or v.revision_stock > 0)`,
      [e.id],
    )) as [Row];
    const violations = differences(
      byProductWarehouse(held),
      byProductWarehouse(moved),
      (key, h, m) => `empresa ${e.id} producto/bodega ${key}: sales hold ${h}, movements took ${m}`,
    );
    return { checked: n, violations };
  },
};

export const returnMovements: Check = {
  name: 'the movements of returns equal what active returns gave back, per product and warehouse',
  run: async (q, e) => {
    const given = await q(
      `select l.id_producto as producto_id, d.bodega_id, sum(l.cantidad)::numeric(24, 4)::text as cantidad
       from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id
       where d.empresa_id = $1 and d.enable and d.clave_stock is not null and l.mueve_stock group by 1, 2`,
      [e.id],
    );
    const moved = await q(
      `select producto_id, bodega_id, sum(cantidad)::numeric(24, 4)::text as cantidad from inventory.movimientos where empresa_id = $1 and origen in ('devolucion', 'anulacion_devolucion') group by 1, 2`,
      [e.id],
    );
    const [{ n }] = (await q('select count(*)::int as n from returns.devolucion_detalles where empresa_id = $1', [e.id])) as [Row];
    const violations = differences(
      byProductWarehouse(given),
      byProductWarehouse(moved),
      (key, g, m) => `empresa ${e.id} producto/bodega ${key}: returns gave back ${g}, movements ${m}`,
    );
    return { checked: n, violations };
  },
};

export const knownOrigins: Check = {
  name: 'every movement has a known origin and opening stock is recorded once',
  run: async (q, e) => {
    const unknown = await q(
      `select origen, count(*)::int as n from inventory.movimientos where empresa_id = $1 and not (origen = any($2)) group by 1`,
      [e.id, KNOWN_ORIGINS],
    );
    const opening = await q(
      `select producto_id, bodega_id from inventory.movimientos where empresa_id = $1 and tipo = 'inventario_inicial' group by 1, 2 having count(*) > 1`,
      [e.id],
    );
    const [{ n }] = (await q('select count(*)::int as n from inventory.movimientos where empresa_id = $1', [e.id])) as [Row];
    return {
      checked: n,
      violations: [
        ...unknown.map((r) => `empresa ${e.id}: ${r.n} movements from unknown origin ${r.origen}`),
        ...opening.map((r) => `empresa ${e.id} producto ${r.producto_id} bodega ${r.bodega_id}: opening stock twice`),
      ],
    };
  },
};

export const reservationsSettled: Check = {
  name: 'no reservation is left open; each sale that took stock has its reservation confirmed, and only those',
  run: async (q, e, o) => {
    const open = await q(
      `select clave, created_at from inventory.reservas where empresa_id = $1 and estado = 'reservada' and created_at < ${olderThan(o.inFlightMs)}`,
      [e.id],
    );
    const violations = open.map((r) => `empresa ${e.id} reservation ${r.clave} still open since ${new Date(r.created_at).toISOString()}`);
    let checked = open.length;
    checked += await inPages(
      q,
      'sales.ventas',
      e.id,
      o.pageSize,
      async (ids) => {
        const ventas = await q('select id, clave_reserva from sales.ventas where empresa_id = $1 and id = any($2)', [e.id, ids]);
        const reservas = await q('select clave, estado from inventory.reservas where empresa_id = $1 and clave = any($2)', [
          e.id,
          ventas.map((v) => v.clave_reserva),
        ]);
        const estado = new Map(reservas.map((r) => [r.clave, r.estado]));
        for (const v of ventas)
          if (estado.get(v.clave_reserva) !== 'confirmada')
            violations.push(`empresa ${e.id} venta ${v.id}: reservation ${v.clave_reserva} is ${estado.get(v.clave_reserva) ?? 'missing'}`);
      },
      `clave_reserva is not null and created_at < ${olderThan(o.inFlightMs)}`,
    );
    checked += await inPages(
      q,
      'inventory.reservas',
      e.id,
      o.pageSize,
      async (ids) => {
        const reservas = await q('select clave from inventory.reservas where empresa_id = $1 and id = any($2)', [e.id, ids]);
        const ventas = await q('select clave_reserva from sales.ventas where empresa_id = $1 and clave_reserva = any($2)', [
          e.id,
          reservas.map((r) => r.clave),
        ]);
        const found = new Set(ventas.map((v) => v.clave_reserva));
        for (const r of reservas)
          if (!found.has(r.clave)) violations.push(`empresa ${e.id} reservation ${r.clave} confirmed without a sale`);
      },
      `origen = 'venta' and estado = 'confirmada'`,
    );
    return { checked, violations };
  },
};

export const stockNotBelowZero: Check = {
  name: 'no stock below zero where the company forbids selling without it (platform orders and annulled returns aside)',
  run: async (q, e) => {
    if (e.venderSinStock) return { checked: 0, violations: [] };
    const rows = await q(
      `select i.producto_id, i.bodega_id, i.stock::text as stock from inventory.inventarios i where i.empresa_id = $1 and i.stock < 0
       and not exists (select 1 from inventory.movimientos m where m.empresa_id = i.empresa_id and m.producto_id = i.producto_id and m.bodega_id = i.bodega_id and m.origen = any($2))`,
      [e.id, BELOW_ZERO_ORIGINS],
    );
    const [{ n }] = (await q('select count(*)::int as n from inventory.inventarios where empresa_id = $1', [e.id])) as [Row];
    return {
      checked: n,
      violations: rows.map((r) => `empresa ${e.id} producto ${r.producto_id} bodega ${r.bodega_id}: stock ${r.stock}`),
    };
  },
};
