import pg from 'pg';
import type { Company, CompanyRef } from './fixture';
import { call } from './http';
import type { LineRecord, LoadLedger } from './load';
import { sleep } from './wait';

/** One invariant, checked over `checked` items; `violations` lists what broke it (empty when it holds). */
export interface InvariantResult {
  name: string;
  checked: number;
  violations: string[];
}

export interface InvariantInput {
  databaseUrl: string;
  ledger: LoadLedger;
  companies: Record<CompanyRef, Company>;
  /** Next number of each document type as seeded, by document name. */
  initialCorrelatives: Record<string, number>;
  /** A gateway to read the same data through the API (read-your-writes from outside). */
  gateway?: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;

/** Stock origins of the sales pipeline: the reservation of a sale, its updates by difference, its annulment. */
const SALE_ORIGINS = ['venta', 'actualizacion_venta', 'anulacion_venta'];
const KNOWN_ORIGINS = [...SALE_ORIGINS, 'inventario', 'devolucion', 'anulacion_devolucion', 'webhook'];

/**
 * Waits until the system is at rest: every outbox published, no reservation still `reservada`,
 * no delivery still `recibida`. Resolves with what was still pending when the time ran out.
 */
export async function settle(databaseUrl: string, timeoutMs = 120_000, everyMs = 250): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = await pendingWork(client);
      if (pending.length === 0 || Date.now() > deadline) return pending;
      await sleep(everyMs);
    }
  } finally {
    await client.end();
  }
}

async function pendingWork(client: pg.Client): Promise<string[]> {
  const outboxes = await outboxTables(client);
  const parts = outboxes.map((schema) => `select '${schema}.outbox' as what, count(*)::int as n from ${schema}.outbox where published_at is null`);
  parts.push(`select 'inventory.reservas reservada', count(*)::int from inventory.reservas where estado = 'reservada'`);
  parts.push(`select 'webhook_ingest.entregas recibida', count(*)::int from webhook_ingest.entregas where estado = 'recibida'`);
  // A return's stock is settled after its commit (and again by its event's consumer).
  parts.push(`select 'returns.devoluciones owing stock', count(*)::int from returns.devoluciones
              where clave_stock is not null and (stock_aplicado_at is null or (not enable and stock_revertido_at is null))`);
  const { rows } = await client.query<{ what: string; n: number }>(parts.join(' union all '));
  return rows.filter((r) => r.n > 0).map((r) => `${r.what}: ${r.n}`);
}

async function outboxTables(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ schema: string }>(`select table_schema as schema from information_schema.tables where table_name = 'outbox' order by 1`);
  return rows.map((r) => r.schema);
}

/**
 * Checks, from the databases and through the API, what the guarantees promise after any fault:
 * acknowledged writes are there, nothing twice, correlatives gapless, stock equal to its ledger
 * and to the sales that moved it, no reservation left open, every delivery processed, every
 * outbox published, exact money, no oversell where it is forbidden.
 */
export async function checkInvariants(input: InvariantInput): Promise<InvariantResult[]> {
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  const q = async (text: string, params: unknown[] = []) => (await client.query<Row>(text, params)).rows;
  const results: InvariantResult[] = [];
  const check = async (name: string, run: () => Promise<{ checked: number; violations: string[] }>) => {
    try {
      results.push({ name, ...(await run()) });
    } catch (err) {
      results.push({ name, checked: 0, violations: [`check failed to run: ${(err as Error).message}`] });
    }
  };
  const empresaRef = new Map(Object.values(input.companies).map((c) => [c.id, c.ref]));
  try {
    await check('every sale answered 2xx is stored once, with the answered id', async () => {
      const acked = [...input.ledger.sales.values()].filter((s) => s.acked);
      const rows = await q('select id, empresa_id, referencia_externa from sales.ventas where referencia_externa = any($1)', [acked.map((s) => s.referencia)]);
      const violations: string[] = [];
      for (const s of acked) {
        const found = rows.filter((r) => r.referencia_externa === s.referencia && empresaRef.get(r.empresa_id) === s.empresa);
        if (found.length !== 1 || found[0]!.id !== s.id) violations.push(`${s.empresa}:${s.referencia} answered id ${s.id}, stored ${JSON.stringify(found.map((r) => r.id))}`);
      }
      return { checked: acked.length, violations };
    });

    await check('no reference or platform order has two sales', async () => {
      const rows = await q(`select empresa_id, referencia_externa, count(*)::int as n from sales.ventas where referencia_externa is not null group by 1, 2 having count(*) > 1`);
      const [{ n }] = (await q('select count(*)::int as n from sales.ventas where referencia_externa is not null')) as [Row];
      return { checked: n, violations: rows.map((r) => `empresa ${r.empresa_id} ${r.referencia_externa}: ${r.n} sales`) };
    });

    await check('every platform order delivered with 200 became exactly one sale with its lines', async () => {
      const acked = [...input.ledger.orders.values()].filter((o) => o.acked);
      const rows = await q(
        `select v.id, v.empresa_id, v.referencia_externa, v.estado, d.id_producto, sum(d.cantidad)::float8 as cantidad
         from sales.ventas v join sales.venta_detalles d on d.venta_id = v.id
         where v.referencia_externa = any($1) group by 1, 2, 3, 4, 5`,
        [acked.map((o) => o.referencia)],
      );
      const violations: string[] = [];
      for (const o of acked) {
        const mine = rows.filter((r) => r.referencia_externa === o.referencia && empresaRef.get(r.empresa_id) === o.empresa);
        const ids = new Set(mine.map((r) => r.id));
        if (ids.size !== 1) {
          const deliveries = await q(`select id, estado, motivo, intentos from webhook_ingest.entregas where referencia = $1 and empresa_id = $2`, [o.referencia, input.companies[o.empresa].id]);
          violations.push(`${o.empresa}:${o.referencia}: ${ids.size} sales; deliveries stored: ${JSON.stringify(deliveries)}`);
          continue;
        }
        const problem = compareLines(o.lines, mine);
        if (problem) violations.push(`${o.empresa}:${o.referencia}: ${problem}`);
      }
      return { checked: acked.length, violations };
    });

    await check('sales are as their last acknowledged write left them (state and lines)', async () => {
      const certain = [...input.ledger.sales.values()].filter((s) => s.acked && !s.uncertain);
      const rows = await q(
        `select v.id, v.estado, d.id_producto, sum(d.cantidad)::float8 as cantidad
         from sales.ventas v join sales.venta_detalles d on d.venta_id = v.id and d.mueve_stock
         where v.id = any($1) group by 1, 2, 3`,
        [certain.map((s) => s.id)],
      );
      const violations: string[] = [];
      for (const s of certain) {
        const expected = s.expected ?? { estado: s.estado, lines: s.lines };
        const mine = rows.filter((r) => r.id === s.id);
        if (mine[0] && mine[0].estado !== expected.estado) violations.push(`sale ${s.id}: estado ${mine[0].estado}, expected ${expected.estado}`);
        const problem = compareLines(expected.lines, mine);
        if (problem) violations.push(`sale ${s.id}: ${problem}`);
      }
      return { checked: certain.length, violations };
    });

    await check('every return answered by the back office is stored once, with the answered id', async () => {
      const acked = [...input.ledger.returns.values()].filter((r) => r.acked);
      const rows = await q('select id, empresa_id, referencia from returns.devoluciones where referencia = any($1)', [acked.map((r) => r.referencia)]);
      const violations: string[] = [];
      for (const r of acked) {
        const found = rows.filter((row) => row.referencia === r.referencia && empresaRef.get(row.empresa_id) === r.empresa);
        if (found.length !== 1 || found[0]!.id !== r.id) violations.push(`${r.empresa}:${r.referencia} answered id ${r.id}, stored ${JSON.stringify(found.map((row) => row.id))}`);
      }
      return { checked: acked.length, violations };
    });

    await check('the movements of returns equal what active returns gave back, per product and warehouse', async () => {
      const rows = await q(
        `with devuelto as (
           select d.empresa_id, l.id_producto as producto_id, d.bodega_id, sum(l.cantidad) as cantidad
           from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id
           where d.enable and d.clave_stock is not null and l.mueve_stock group by 1, 2, 3
         ), movido as (
           select empresa_id, producto_id, bodega_id, sum(cantidad) as cantidad from inventory.movimientos
           where origen in ('devolucion', 'anulacion_devolucion') group by 1, 2, 3
         )
         select coalesce(devuelto.empresa_id, movido.empresa_id) as empresa_id, coalesce(devuelto.producto_id, movido.producto_id) as producto_id,
                coalesce(devuelto.bodega_id, movido.bodega_id) as bodega_id, devuelto.cantidad::text as devuelto, movido.cantidad::text as movido
         from devuelto full join movido on movido.empresa_id = devuelto.empresa_id and movido.producto_id = devuelto.producto_id and movido.bodega_id = devuelto.bodega_id
         where coalesce(devuelto.cantidad, 0) <> coalesce(movido.cantidad, 0)`,
      );
      const [{ n }] = (await q('select count(*)::int as n from returns.devolucion_detalles')) as [Row];
      return { checked: n, violations: rows.map((r) => `empresa ${r.empresa_id} producto ${r.producto_id} bodega ${r.bodega_id}: returns gave back ${r.devuelto ?? 0}, movements ${r.movido ?? 0}`) };
    });

    await check('return correlatives are unique and gapless per document type', async () => {
      const rows = await q(
        `select d.id, d.empresa_id, d.nombre, d.prefijo, d.correlativo as siguiente, count(v.id)::int as n, count(distinct v.numero)::int as distintos, min(v.numero) as min, max(v.numero) as max
         from returns.documentos d left join returns.devoluciones v on v.documento_id = d.id group by d.id order by d.id`,
      );
      const violations = rows
        .filter((d) => d.n !== d.distintos || (d.n > 0 && d.max - d.min + 1 !== d.n) || (d.n > 0 && d.max !== d.siguiente - 1))
        .map((d) => `${d.nombre} (empresa ${d.empresa_id}): ${d.n} returns, ${d.distintos} distinct numbers ${d.min}..${d.max}, counter at ${d.siguiente}`);
      const [{ n }] = (await q('select count(*)::int as n from returns.devoluciones')) as [Row];
      return { checked: n, violations };
    });

    await check('correlatives are unique and gapless per document type', async () => {
      const emisor = (await q(`select 1 from information_schema.columns where table_schema = 'sales' and table_name = 'ventas' and column_name = 'documento_emisor_id'`)).length > 0;
      const issuer = emisor ? 'coalesce(v.documento_emisor_id, v.documento_id)' : 'v.documento_id';
      const rows = await q(
        `select d.id, d.empresa_id, d.nombre, d.prefijo, d.correlativo as siguiente, count(v.id)::int as n, count(distinct v.numero)::int as distintos,
                min(v.numero) as min, max(v.numero) as max, count(*) filter (where v.correlativo <> d.prefijo || v.numero::text)::int as mal_formados
         from sales.documentos d left join sales.ventas v on ${issuer} = d.id group by d.id order by d.id`,
      );
      const violations: string[] = [];
      for (const d of rows) {
        const initial = input.initialCorrelatives[d.nombre];
        if (initial === undefined) continue;
        const expected = d.siguiente - initial;
        const gapless = d.n === expected && d.distintos === d.n && (d.n === 0 || (d.min === initial && d.max === d.siguiente - 1));
        if (!gapless || d.mal_formados > 0) {
          violations.push(`${d.nombre} (empresa ${d.empresa_id}): ${d.n} sales, ${d.distintos} distinct numbers ${d.min}..${d.max}, counter at ${d.siguiente} from ${initial}, ${d.mal_formados} malformed`);
        }
      }
      const [{ n }] = (await q('select count(*)::int as n from sales.ventas')) as [Row];
      return { checked: n, violations };
    });

    await check('stock of every product and warehouse equals the sum of its ledger movements', async () => {
      const rows = await q(
        `select coalesce(i.producto_id, m.producto_id) as producto_id, coalesce(i.bodega_id, m.bodega_id) as bodega_id, i.stock::text as stock, m.total::text as movimientos
         from inventory.inventarios i
         full join (select producto_id, bodega_id, sum(cantidad) as total from inventory.movimientos group by 1, 2) m on m.producto_id = i.producto_id and m.bodega_id = i.bodega_id
         where coalesce(i.stock, 0) <> coalesce(m.total, 0)`,
      );
      const [{ n }] = (await q('select count(*)::int as n from inventory.inventarios')) as [Row];
      return { checked: n, violations: rows.map((r) => `producto ${r.producto_id} bodega ${r.bodega_id}: stock ${r.stock}, ledger ${r.movimientos}`) };
    });

    // Stock has three decimals and a line's quantity up to four: inventory rounds each line half up (its documented rule).
    await check('the movements of sales equal what live sales hold, per product and warehouse (each line rounded to the stock\'s 3 decimals)', async () => {
      const rows = await q(
        `with vendido as (
           select v.empresa_id, d.id_producto as producto_id, v.bodega_id, sum(round(d.cantidad, 3)) as cantidad
           from sales.ventas v join sales.venta_detalles d on d.venta_id = v.id
           where v.estado in ('Completada', 'Pendiente') and d.mueve_stock group by 1, 2, 3
         ), movido as (
           select empresa_id, producto_id, bodega_id, -sum(cantidad) as cantidad from inventory.movimientos where origen = any($1) group by 1, 2, 3
         )
         select coalesce(vendido.empresa_id, movido.empresa_id) as empresa_id, coalesce(vendido.producto_id, movido.producto_id) as producto_id,
                coalesce(vendido.bodega_id, movido.bodega_id) as bodega_id, vendido.cantidad::text as vendido, movido.cantidad::text as movido
         from vendido full join movido on movido.empresa_id = vendido.empresa_id and movido.producto_id = vendido.producto_id and movido.bodega_id = vendido.bodega_id
         where coalesce(vendido.cantidad, 0) <> coalesce(movido.cantidad, 0)`,
        [SALE_ORIGINS],
      );
      const [{ n }] = (await q(`select count(*)::int as n from sales.venta_detalles where mueve_stock`)) as [Row];
      return { checked: n, violations: rows.map((r) => `empresa ${r.empresa_id} producto ${r.producto_id} bodega ${r.bodega_id}: sales hold ${r.vendido ?? 0}, movements took ${r.movido ?? 0}`) };
    });

    await check('every movement has a known origin and opening stock is as seeded', async () => {
      const unknown = await q(`select origen, count(*)::int as n from inventory.movimientos where not (origen = any($1)) group by 1`, [KNOWN_ORIGINS]);
      const opening = await q(
        `select i.producto_id, i.bodega_id from inventory.inventarios i
         where (select count(*) from inventory.movimientos m where m.producto_id = i.producto_id and m.bodega_id = i.bodega_id and m.tipo = 'inventario_inicial') > 1`,
      );
      const [{ n }] = (await q('select count(*)::int as n from inventory.movimientos')) as [Row];
      return {
        checked: n,
        violations: [...unknown.map((r) => `${r.n} movements from unknown origin ${r.origen}`), ...opening.map((r) => `producto ${r.producto_id} bodega ${r.bodega_id}: opening stock twice`)],
      };
    });

    await check('no reservation is left open; each sale that took stock has its reservation confirmed, and only those', async () => {
      const open = await q(`select clave, empresa_id, created_at from inventory.reservas where estado = 'reservada'`);
      const unconfirmed = await q(
        `select v.id, v.clave_reserva, r.estado from sales.ventas v left join inventory.reservas r on r.empresa_id = v.empresa_id and r.clave = v.clave_reserva
         where v.clave_reserva is not null and r.estado is distinct from 'confirmada'`,
      );
      const orphans = await q(
        `select r.clave from inventory.reservas r where r.origen = 'venta' and r.estado = 'confirmada'
         and not exists (select 1 from sales.ventas v where v.empresa_id = r.empresa_id and v.clave_reserva = r.clave)`,
      );
      const [{ n }] = (await q('select count(*)::int as n from inventory.reservas')) as [Row];
      return {
        checked: n,
        violations: [
          ...open.map((r) => `reservation ${r.clave} (empresa ${r.empresa_id}) still open since ${new Date(r.created_at).toISOString()}`),
          ...unconfirmed.map((r) => `sale ${r.id}: reservation ${r.clave_reserva} is ${r.estado ?? 'missing'}`),
          ...orphans.map((r) => `reservation ${r.clave} confirmed without a sale`),
        ],
      };
    });

    await check('the webhook inbox is fully processed: nothing pending, no delivery of the load failed', async () => {
      const pending = await q(`select count(*)::int as n from webhook_ingest.entregas where estado = 'recibida'`);
      const refs = [...[...input.ledger.orders.values()].map((o) => o.referencia), ...input.ledger.productUpdates.map((u) => u.referencia)];
      const failed = await q(`select referencia, motivo from webhook_ingest.entregas where estado = 'fallida' and referencia = any($1)`, [refs]);
      const [{ n }] = (await q('select count(*)::int as n from webhook_ingest.entregas')) as [Row];
      return {
        checked: n,
        violations: [...(pending[0]!.n > 0 ? [`${pending[0]!.n} deliveries still recibida`] : []), ...failed.map((r) => `delivery of ${r.referencia} failed: ${r.motivo}`)],
      };
    });

    await check('every outbox is published', async () => {
      const violations: string[] = [];
      let checked = 0;
      for (const schema of await outboxTables(client)) {
        const [row] = (await q(`select count(*)::int as n, count(*) filter (where published_at is null)::int as pending from ${schema}.outbox`)) as [Row];
        checked += row.n;
        if (row.pending > 0) violations.push(`${schema}: ${row.pending} events unpublished`);
      }
      return { checked, violations };
    });

    await check('money is exact: total = sub_total + iva on every sale and line, and a sale sums its lines', async () => {
      const lines = await q(`select id from sales.venta_detalles where total <> sub_total + iva`);
      const sales = await q(`select id from sales.ventas where total <> sub_total + iva`);
      const sums = await q(
        `select v.id from sales.ventas v join (select venta_id, sum(total) as t, sum(sub_total) as s, sum(iva) as i from sales.venta_detalles group by 1) d on d.venta_id = v.id
         where v.total <> d.t or v.sub_total <> d.s or v.iva <> d.i`,
      );
      const [{ n }] = (await q('select count(*)::int as n from sales.ventas')) as [Row];
      return {
        checked: n,
        violations: [...sales.map((r) => `sale ${r.id}: total ≠ sub_total + iva`), ...lines.map((r) => `line ${r.id}: total ≠ sub_total + iva`), ...sums.map((r) => `sale ${r.id}: amounts ≠ sum of its lines`)],
      };
    });

    await check('no stock below zero in the company that forbids selling without it', async () => {
      const rows = await q(`select producto_id, bodega_id, stock::text as stock from inventory.inventarios where empresa_id = $1 and stock < 0`, [input.companies.s.id]);
      const [{ n }] = (await q('select count(*)::int as n from inventory.inventarios where empresa_id = $1', [input.companies.s.id])) as [Row];
      return { checked: n, violations: rows.map((r) => `producto ${r.producto_id} bodega ${r.bodega_id}: stock ${r.stock}`) };
    });

    await check('every package acknowledged (created or skipped) exists once with the answered id', async () => {
      const acked = [...input.ledger.packages.values()].filter((p) => p.acked);
      const rows = await q('select id, empresa_id, wr from packages.paquetes where wr = any($1)', [acked.map((p) => p.wr)]);
      const violations: string[] = [];
      for (const p of acked) {
        const found = rows.filter((r) => r.wr === p.wr && empresaRef.get(r.empresa_id) === p.empresa);
        if (found.length !== 1 || found[0]!.id !== p.id) violations.push(`${p.empresa}:${p.wr} answered id ${p.id}, stored ${JSON.stringify(found.map((r) => r.id))}`);
      }
      return { checked: acked.length, violations };
    });

    if (input.gateway) {
      const gateway = input.gateway;
      await check('the API shows what the databases hold (sales counts, sale details, stock per warehouse)', async () => {
        const violations: string[] = [];
        let checked = 0;
        for (const c of Object.values(input.companies)) {
          const [{ n }] = (await q('select count(*)::int as n from sales.ventas where empresa_id = $1', [c.id])) as [Row];
          const summary = await call(`${gateway}/api/external/v1/sales/summary`, { key: c.key });
          checked++;
          if (summary.body?.data?.cantidad_ventas !== n) violations.push(`${c.ref}: summary counts ${summary.body?.data?.cantidad_ventas} sales (status ${summary.status}), database ${n}`);
          for (const producto of Object.values(c.productos)) {
            const stock = await q('select bodega_id, stock::float8 as stock from inventory.inventarios where producto_id = $1', [producto]);
            const res = await call(`${gateway}/api/external/v1/inventory/${producto}`, { key: c.key });
            checked++;
            const shown = new Map<string, number>(((res.body?.data?.inventarios ?? []) as Array<{ nombre_bodega: string; stock: number }>).map((i) => [i.nombre_bodega, i.stock]));
            const total = stock.reduce((s, r) => s + r.stock, 0);
            const shownTotal = [...shown.values()].reduce((s, v) => s + v, 0);
            if (res.status !== 200 || Math.abs(total - shownTotal) > 1e-9) violations.push(`${c.ref} producto ${producto}: API stock ${shownTotal} (status ${res.status}), database ${total}`);
          }
        }
        const sample = [...input.ledger.sales.values()].filter((s) => s.acked).slice(-200);
        for (const s of sample) {
          const res = await call(`${gateway}/api/external/v1/sales/${s.id}`, { key: input.companies[s.empresa].key });
          checked++;
          if (res.status !== 200 || res.body?.data?.referencia_externa !== s.referencia) violations.push(`GET /sales/${s.id} (${s.empresa}:${s.referencia}) answered ${res.status}`);
        }
        return { checked, violations };
      });
    }
  } finally {
    await client.end();
  }
  return results;
}

/** Lines by product (quantities summed) against what was expected; undefined when they agree. */
function compareLines(expected: LineRecord[], rows: Row[]): string | undefined {
  const want = new Map<number, number>();
  for (const l of expected) want.set(l.id_producto, (want.get(l.id_producto) ?? 0) + l.cantidad);
  const got = new Map<number, number>();
  for (const r of rows) got.set(r.id_producto, (got.get(r.id_producto) ?? 0) + Number(r.cantidad));
  const keys = new Set([...want.keys(), ...got.keys()]);
  for (const k of keys) {
    if (Math.abs((want.get(k) ?? 0) - (got.get(k) ?? 0)) > 1e-9) return `lines ${JSON.stringify(Object.fromEntries(got))}, expected ${JSON.stringify(Object.fromEntries(want))}`;
  }
  return undefined;
}

/** One line per invariant: name, items checked, violations (the first few spelled out). */
export function formatInvariants(results: InvariantResult[]): string {
  return results
    .map((r) => {
      const head = `${r.violations.length === 0 ? 'ok  ' : 'FAIL'} ${r.name} (${r.checked} checked)`;
      return r.violations.length === 0 ? head : `${head}\n${r.violations.slice(0, 10).map((v) => `       - ${v}`).join('\n')}${r.violations.length > 10 ? `\n       … ${r.violations.length - 10} more` : ''}`;
    })
    .join('\n');
}
