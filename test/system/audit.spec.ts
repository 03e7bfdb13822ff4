import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { auditBooks, type InvariantResult } from '@erp/back-office';
import { returnsAdminSubjects, salesAdminSubjects } from '@erp/contracts';
import { Stack } from '../support/stack';
import { eventually } from '@erp/testing';
import { API, SALES_KEY_A, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';

const ROOT = path.resolve(__dirname, '../..');
const ctx = { requestId: 'audit' };

interface AuditRun {
  code: number;
  stdout: string;
  report?: { ok: boolean; invariants: InvariantResult[] };
}

/**
 * `npm run admin -- audit`: the books' invariants checked on the live databases, read-only. Clean
 * on freshly seeded companies with sales, updates, returns and annulments; a violation planted
 * behind the services' back is reported with its ids and exit code 1, for its company only.
 */
describe('admin audit', () => {
  let stack: Stack;
  let a: SalesRefs;
  let demoId: number;

  const audit = async (...args: string[]): Promise<AuditRun> => {
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--conditions=development', '--import', 'tsx', 'services/admin/src/cli.ts', 'audit', ...args],
        {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: stack.iso.databaseUrl, LOG_LEVEL: 'silent' },
        },
      );
      return { code: 0, stdout, ...(args.includes('--json') ? { report: JSON.parse(stdout) } : {}) };
    } catch (err) {
      const { code, stdout } = err as { code: number; stdout: string };
      return { code, stdout, ...(args.includes('--json') && stdout ? { report: JSON.parse(stdout) } : {}) };
    }
  };
  const violationsOf = (run: AuditRun) =>
    Object.fromEntries(run.report!.invariants.filter((i) => i.violations.length > 0).map((i) => [i.name, i.violations]));

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook-ingest'] });
    const demo = await stack.seed(JSON.parse(await readFile(path.join(ROOT, 'test/fixtures/demo.json'), 'utf8')));
    demoId = demo.empresas.demo!.id;
    a = refsOf(await stack.seed({ empresas: [salesFixture().empresas[0]] }), 'a');

    // Some of everything that moves stock: sales, an update, a return, an annulment.
    const mouse = a.productos.mouse!;
    const pendiente = (
      await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { estado: 'Pendiente', id_cliente: a.clientes.libre, detalles: [{ id_producto: mouse, cantidad: 4 }] }),
      )
    ).body.data;
    const put = await stack.api(`${API}/sales/${pendiente.id}`, {
      key: SALES_KEY_A,
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ detalles: [{ id: pendiente.detalles[0].id, cantidad: 2.5 }] }),
    });
    expect(put.status).toBe(200);
    const devuelta = (
      await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, {
          detalles: [
            { id_producto: mouse, cantidad: 3 },
            { id_producto: a.productos.libro!, cantidad: 1 },
          ],
        }),
      )
    ).body.data;
    await stack.admin.request(
      returnsAdminSubjects,
      'returns.admin.create',
      {
        empresa_id: a.id,
        id_venta: devuelta.id,
        fecha: '2026-03-11',
        tipo: 'devolucion',
        detalles: [{ id_producto: mouse, cantidad: 2 }],
      } as never,
      ctx,
    );
    const anulada = (await postSale(stack, SALES_KEY_A, saleBody(a))).body.data;
    await stack.admin.request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: a.id, id_venta: anulada.id }, ctx);
    // At rest: every event published and consumed (the sales count their returns).
    await eventually(async () => {
      for (const schema of ['gateway', 'inventory', 'sales', 'returns'])
        expect((await stack.query(`select count(*)::int as n from ${schema}.outbox where published_at is null`))[0]!.n).toBe(0);
      expect((await stack.query('select monto_devuelto::text as m from sales.ventas where id = $1', [devuelta.id]))[0]!.m).not.toBe('0.00');
    }, 20_000);
  });
  afterAll(() => stack.stop());

  it('runs clean on freshly seeded companies, counting what it checked', async () => {
    const run = await audit('--json');
    expect([run.code, violationsOf(run)]).toEqual([0, {}]);
    expect(run.report!.ok).toBe(true);
    const checked = Object.fromEntries(run.report!.invariants.map((i) => [i.name, i.checked]));
    expect(Object.keys(checked)).toHaveLength(14);
    for (const name of [
      'sale correlatives are unique and gapless per document type',
      'stock of every product and warehouse equals the sum of its ledger movements',
      'the movements of sales equal what live sales hold, per product and warehouse (each line rounded to the stock’s 3 decimals)',
      'active returns never give back more than the sale still holds, per sale line',
      'each sale counts its active returns and their amount',
      'no reservation is left open; each sale that took stock has its reservation confirmed, and only those',
      'money is exact: total = sub_total + iva on every sale and line, and a sale sums its lines',
    ]) {
      expect([name, checked[name]! > 0]).toEqual([name, true]);
    }
    const text = await audit();
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^ok {3}stock of every product and warehouse equals the sum of its ledger movements \(\d+ checked, \d+\.\d s\)$/m,
    );
    expect(text.stdout).not.toMatch(/FAIL/);
  });

  it('reports a stock row changed behind the ledger’s back, with its ids, and exits 1; for its company only', async () => {
    const [row] = await stack.query<{ producto_id: number; bodega_id: number }>(
      'select producto_id, bodega_id from inventory.inventarios where empresa_id = $1 and producto_id = $2',
      [a.id, a.productos.libro],
    );
    await stack.query('update inventory.inventarios set stock = stock + 1 where producto_id = $1 and bodega_id = $2', [
      row!.producto_id,
      row!.bodega_id,
    ]);
    try {
      const run = await audit('--json');
      expect(run.code).toBe(1);
      expect(run.report!.ok).toBe(false);
      expect(violationsOf(run)).toEqual({
        'stock of every product and warehouse equals the sum of its ledger movements': [
          `empresa ${a.id} producto ${row!.producto_id} bodega ${row!.bodega_id}: stock 40.000, ledger 39.000`,
        ],
      });
      const text = await audit('--empresa', String(a.id));
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(`FAIL stock of every product and warehouse equals the sum of its ledger movements`);
      expect(text.stdout).toContain(`- empresa ${a.id} producto ${row!.producto_id} bodega ${row!.bodega_id}: stock 40.000, ledger 39.000`);
      expect((await audit('--empresa', String(demoId))).code).toBe(0);
    } finally {
      await stack.query('update inventory.inventarios set stock = stock - 1 where producto_id = $1 and bodega_id = $2', [
        row!.producto_id,
        row!.bodega_id,
      ]);
    }
  });

  it('reports a return that gives back more than its sale still holds (a sale annulled behind its return’s back)', async () => {
    const [devolucion] = await stack.query<{ id: number; venta_id: number; venta_detalle_id: number }>(
      `select d.id, d.venta_id, l.venta_detalle_id from returns.devoluciones d join returns.devolucion_detalles l on l.devolucion_id = d.id where d.empresa_id = $1 and d.enable and l.mueve_stock order by d.id limit 1`,
      [a.id],
    );
    await stack.query(`update sales.ventas set estado = 'Anulada' where id = $1`, [devolucion!.venta_id]);
    try {
      const run = await audit('--json', '--empresa', String(a.id));
      expect(run.code).toBe(1);
      expect(violationsOf(run)['active returns never give back more than the sale still holds, per sale line']).toEqual([
        `empresa ${a.id} venta ${devolucion!.venta_id} (Anulada) línea ${devolucion!.venta_detalle_id}: active returns ${devolucion!.id} gave back 2, the sale holds 0`,
      ]);
    } finally {
      await stack.query(`update sales.ventas set estado = 'Completada' where id = $1`, [devolucion!.venta_id]);
    }
  });

  it('reports a sale that no longer sums its lines (a line changed behind its back)', async () => {
    const [linea] = await stack.query<{ id: number; venta_id: number }>(
      'select id, venta_id from sales.venta_detalles where empresa_id = $1 order by id limit 1',
      [a.id],
    );
    // A check constraint keeps each line's total = sub_total + iva; the sale's sums are the audit's.
    await stack.query('update sales.venta_detalles set total = total + 0.01, sub_total = sub_total + 0.01 where id = $1', [linea!.id]);
    try {
      const results = await auditBooks({ databaseUrl: stack.iso.databaseUrl, empresaId: a.id, inFlightMs: 0 });
      expect(results.filter((r) => r.violations.length > 0).map((r) => [r.name, r.violations])).toEqual([
        [
          'money is exact: total = sub_total + iva on every sale and line, and a sale sums its lines',
          [`empresa ${a.id} venta ${linea!.venta_id}: amounts ≠ sum of its lines`],
        ],
      ]);
    } finally {
      await stack.query('update sales.venta_detalles set total = total - 0.01, sub_total = sub_total - 0.01 where id = $1', [linea!.id]);
    }
  });

  it('refuses a company that does not exist and unknown options', async () => {
    const missing = await audit('--empresa', '999999');
    expect(missing.code).toBe(1);
    const unknown = await audit('--bogus');
    expect(unknown.code).toBe(1);
  });
});
