import { SchemaClients, auditBooks, type DatabaseUrls, type InvariantResult, type Row } from '@erp/back-office';
import type { Company, CompanyRef } from './fixture';
import { call } from './http';
import type { LineRecord, LoadLedger } from './load';
import { sleep } from './wait';

export { formatInvariants, type InvariantResult } from '@erp/back-office';

export interface InvariantInput {
  databases: DatabaseUrls;
  ledger: LoadLedger;
  companies: Record<CompanyRef, Company>;
  /** Next number of each document type as seeded, by document name. */
  initialCorrelatives: Record<string, number>;
  /** A gateway to read the same data through the API (read-your-writes from outside). */
  gateway?: string;
}

/**
 * Waits until the system is at rest: every outbox published, no reservation still `reservada`,
 * no delivery still `recibida`, no export still running. Resolves with what was still pending when the time ran out.
 */
export async function settle(databases: DatabaseUrls, timeoutMs = 120_000, everyMs = 250): Promise<string[]> {
  const clients = await SchemaClients.connect(databases);
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = await pendingWork(clients);
      if (pending.length === 0 || Date.now() > deadline) return pending;
      await sleep(everyMs);
    }
  } finally {
    await clients.end();
  }
}

async function pendingWork(clients: SchemaClients): Promise<string[]> {
  const parts: string[] = [];
  for (const q of clients.each) {
    const outboxes = await q(`select table_schema as schema from information_schema.tables where table_name = 'outbox' order by 1`);
    for (const { schema } of outboxes)
      parts.push(`select '${schema}.outbox' as what, count(*)::int as n from ${schema}.outbox where published_at is null`);
  }
  parts.push(`select 'inventory.reservas reservada' as what, count(*)::int as n from inventory.reservas where estado = 'reservada'`);
  parts.push(
    `select 'webhook_ingest.entregas recibida' as what, count(*)::int as n from webhook_ingest.entregas where estado = 'recibida'`,
  );
  // A return's stock is settled after its commit (and again by its event's consumer).
  parts.push(`select 'returns.devoluciones owing stock' as what, count(*)::int as n from returns.devoluciones
              where clave_stock is not null and (stock_aplicado_at is null or (not enable and stock_revertido_at is null))`);
  // A registration is pending until its return's event reaches sales (redelivered after a crash of sales) or,
  // when no return came of it (the returns service failed before its commit), until the sweeper squares the sale.
  parts.push(
    `select 'sales return registrations pending' as what, count(*)::int as n from sales.devoluciones_registradas where estado = 'registrada'`,
  );
  // An export runs until its file is written (another replica takes it over when its worker died).
  parts.push(`select 'exports running' as what, count(*)::int as n from exports.exportaciones where estado in ('en_cola', 'procesando')`);
  // A change of a sale that died, perhaps after inventory applied its stock revision, until the revision sweeper squares it.
  parts.push(`select 'sales changes that died, not squared' as what, count(*)::int as n from sales.cambios_en_curso`);
  // One statement when every schema shares a database (the settle loop polls it often); one per part otherwise.
  const statements = clients.each.length === 1 ? [parts.join(' union all ')] : parts;
  const rows: Row[] = [];
  // One statement at a time: a pg client runs its queries one after another anyway.
  for (const sql of statements) rows.push(...(await (clients.each.length === 1 ? clients.each[0]! : clients.q)(sql)));
  return rows.filter((r) => r.n > 0).map((r) => `${r.what}: ${r.n}`);
}

/**
 * Checks what the guarantees promise after any fault: the books' invariants of the operators'
 * audit (`npm run admin -- audit`, the same code, with the system at rest), then what only the
 * load knows: every acknowledged write is there once with the answered id, sales are as their
 * last acknowledged change left them, no delivery of the load failed, and the API shows what the
 * databases hold.
 */
export async function checkInvariants(input: InvariantInput): Promise<InvariantResult[]> {
  const results: InvariantResult[] = await auditBooks({
    ...input.databases,
    inFlightMs: 0,
    // At rest nothing is on its way: what one look finds is what is there.
    confirmAfterMs: 0,
    initialCorrelatives: input.initialCorrelatives,
  });
  const clients = await SchemaClients.connect(input.databases);
  const { q } = clients;
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
      const rows = await q('select id, empresa_id, referencia_externa from sales.ventas where referencia_externa = any($1)', [
        acked.map((s) => s.referencia),
      ]);
      const violations: string[] = [];
      for (const s of acked) {
        const found = rows.filter((r) => r.referencia_externa === s.referencia && empresaRef.get(r.empresa_id) === s.empresa);
        if (found.length !== 1 || found[0]!.id !== s.id)
          violations.push(`${s.empresa}:${s.referencia} answered id ${s.id}, stored ${JSON.stringify(found.map((r) => r.id))}`);
      }
      return { checked: acked.length, violations };
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
          const deliveries = await q(
            `select id, estado, motivo, intentos from webhook_ingest.entregas where referencia = $1 and empresa_id = $2`,
            [o.referencia, input.companies[o.empresa].id],
          );
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
        if (mine[0] && mine[0].estado !== expected.estado)
          violations.push(`sale ${s.id}: estado ${mine[0].estado}, expected ${expected.estado}`);
        // An update that got no definite answer leaves the lines unknown, whatever was answered after it.
        if (s.linesUncertain) continue;
        const problem = compareLines(expected.lines, mine);
        if (problem) violations.push(`sale ${s.id}: ${problem}`);
      }
      return { checked: certain.length, violations };
    });

    await check('every return answered by the back office is stored once, with the answered id', async () => {
      const acked = [...input.ledger.returns.values()].filter((r) => r.acked);
      const rows = await q('select id, empresa_id, referencia from returns.devoluciones where referencia = any($1)', [
        acked.map((r) => r.referencia),
      ]);
      const violations: string[] = [];
      for (const r of acked) {
        const found = rows.filter((row) => row.referencia === r.referencia && empresaRef.get(row.empresa_id) === r.empresa);
        if (found.length !== 1 || found[0]!.id !== r.id)
          violations.push(`${r.empresa}:${r.referencia} answered id ${r.id}, stored ${JSON.stringify(found.map((row) => row.id))}`);
      }
      return { checked: acked.length, violations };
    });

    await check('no webhook delivery of the load failed', async () => {
      const refs = [...[...input.ledger.orders.values()].map((o) => o.referencia), ...input.ledger.productUpdates.map((u) => u.referencia)];
      const failed = await q(`select referencia, motivo from webhook_ingest.entregas where estado = 'fallida' and referencia = any($1)`, [
        refs,
      ]);
      return { checked: refs.length, violations: failed.map((r) => `delivery of ${r.referencia} failed: ${r.motivo}`) };
    });

    await check('every package acknowledged (created or skipped) exists once with the answered id', async () => {
      const acked = [...input.ledger.packages.values()].filter((p) => p.acked);
      const rows = await q('select id, empresa_id, wr from packages.paquetes where wr = any($1)', [acked.map((p) => p.wr)]);
      const violations: string[] = [];
      for (const p of acked) {
        const found = rows.filter((r) => r.wr === p.wr && empresaRef.get(r.empresa_id) === p.empresa);
        if (found.length !== 1 || found[0]!.id !== p.id)
          violations.push(`${p.empresa}:${p.wr} answered id ${p.id}, stored ${JSON.stringify(found.map((r) => r.id))}`);
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
          if (summary.body?.data?.cantidad_ventas !== n)
            violations.push(
              `${c.ref}: summary counts ${summary.body?.data?.cantidad_ventas} sales (status ${summary.status}), database ${n}`,
            );
          for (const producto of Object.values(c.productos)) {
            const stock = await q('select bodega_id, stock::float8 as stock from inventory.inventarios where producto_id = $1', [producto]);
            const res = await call(`${gateway}/api/external/v1/inventory/${producto}`, { key: c.key });
            checked++;
            const shown = new Map<string, number>(
              ((res.body?.data?.inventarios ?? []) as Array<{ nombre_bodega: string; stock: number }>).map((i) => [
                i.nombre_bodega,
                i.stock,
              ]),
            );
            const total = stock.reduce((s, r) => s + r.stock, 0);
            const shownTotal = [...shown.values()].reduce((s, v) => s + v, 0);
            if (res.status !== 200 || Math.abs(total - shownTotal) > 1e-9)
              violations.push(`${c.ref} producto ${producto}: API stock ${shownTotal} (status ${res.status}), database ${total}`);
          }
        }
        const sample = [...input.ledger.sales.values()].filter((s) => s.acked).slice(-200);
        for (const s of sample) {
          const res = await call(`${gateway}/api/external/v1/sales/${s.id}`, { key: input.companies[s.empresa].key });
          checked++;
          if (res.status !== 200 || res.body?.data?.referencia_externa !== s.referencia)
            violations.push(`GET /sales/${s.id} (${s.empresa}:${s.referencia}) answered ${res.status}`);
        }
        return { checked, violations };
      });
    }
  } finally {
    await clients.end();
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
    if (Math.abs((want.get(k) ?? 0) - (got.get(k) ?? 0)) > 1e-9)
      return `lines ${JSON.stringify(Object.fromEntries(got))}, expected ${JSON.stringify(Object.fromEntries(want))}`;
  }
  return undefined;
}
