import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { InvariantResult } from '@erp/back-office';
import { returnsAdminSubjects } from '@erp/contracts';
import { eventually, isolate, type Isolation } from '@erp/testing';
import { API, SALES_KEY_A, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { Stack } from '../support/stack';

const ROOT = path.resolve(__dirname, '../..');

/**
 * A deployment that moved the sales schema to a database of its own (`DATABASE_URL_SALES`), the
 * first split when one Postgres is not enough: no statement crosses schemas, so the services work
 * unchanged, and the audit reads each schema where it lives and compares what spans services by key.
 */
describe('sales on a database of its own', () => {
  let salesDb: Isolation;
  let sales: pg.Client;
  let stack: Stack;
  let a: SalesRefs;
  let ventaId: number;

  const audit = async (env: Record<string, string>): Promise<{ code: number; report: { ok: boolean; invariants: InvariantResult[] } }> => {
    const run = promisify(execFile)(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', 'services/admin/src/cli.ts', 'audit', '--json'],
      {
        cwd: ROOT,
        env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: stack.iso.databaseUrl, ...env },
      },
    );
    const { code, stdout } = await run.then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code: number; stdout: string }) => err,
    );
    return { code, report: JSON.parse(stdout) };
  };
  const violationsOf = (report: { invariants: InvariantResult[] }) =>
    Object.fromEntries(report.invariants.filter((i) => i.violations.length > 0).map((i) => [i.name, i.violations]));

  beforeAll(async () => {
    salesDb = await isolate('salesdb');
    sales = new pg.Client({ connectionString: salesDb.databaseUrl });
    await sales.connect();
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'returns', 'packages', 'webhook-ingest'],
      databases: { sales: salesDb.databaseUrl },
    });
    a = refsOf(await stack.seed({ empresas: [salesFixture().empresas[0]] }), 'a');
    const venta = (await postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: a.productos.mouse!, cantidad: 3 }] }))).body
      .data;
    ventaId = venta.id;
    await stack.admin.request(
      returnsAdminSubjects,
      'returns.admin.create',
      {
        empresa_id: a.id,
        id_venta: ventaId,
        fecha: '2026-03-11',
        tipo: 'devolucion',
        detalles: [{ id_producto: a.productos.mouse!, cantidad: 1 }],
      } as never,
      { requestId: 'split' },
    );
    // At rest: every outbox published, on both databases, and the sale counts its return.
    await eventually(async () => {
      for (const schema of ['gateway', 'inventory', 'returns'])
        expect((await stack.query(`select count(*)::int as n from ${schema}.outbox where published_at is null`))[0]!.n).toBe(0);
      expect((await sales.query('select count(*)::int as n from sales.outbox where published_at is null')).rows[0].n).toBe(0);
      expect((await sales.query('select monto_devuelto::text as m from sales.ventas where id = $1', [ventaId])).rows[0].m).not.toBe('0.00');
    }, 20_000);
  });
  afterAll(async () => {
    await stack.stop();
    await sales.end();
    await salesDb.drop();
  });

  it('keeps the sales in their own database and serves them as before', async () => {
    await expect(stack.query('select 1 from sales.ventas')).rejects.toThrow(/relation "sales.ventas" does not exist/);
    const res = await stack.api(`${API}/sales/${ventaId}`, { key: SALES_KEY_A });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { detalles: Array<{ cantidad: number }> } }).data.detalles[0]!.cantidad).toBe(3);
  });

  it('audits each schema on its database: clean, the sales outbox counted', async () => {
    const { code, report } = await audit({ DATABASE_URL_SALES: salesDb.databaseUrl });
    expect([code, violationsOf(report)]).toEqual([0, {}]);
    const salesEvents = (await sales.query('select count(*)::int as n from sales.outbox')).rows[0].n as number;
    const outboxes = report.invariants.find((i) => i.name === 'every outbox is published')!;
    const elsewhere = await stack.query<{ n: number }>(
      `select (select count(*) from gateway.outbox) + (select count(*) from inventory.outbox) + (select count(*) from returns.outbox)
            + (select count(*) from packages.outbox) + (select count(*) from webhook_ingest.outbox) as n`,
    );
    expect(salesEvents).toBeGreaterThan(0);
    expect(outboxes.checked).toBe(Number(elsewhere[0]!.n) + salesEvents);
  });

  it('fails where it is not told where the sales live', async () => {
    const { code, report } = await audit({});
    expect(code).toBe(1);
    expect(violationsOf(report)['money is exact: total = sub_total + iva on every sale and line, and a sale sums its lines']).toEqual([
      expect.stringMatching(/check failed to run for empresa \d+: relation "sales.ventas" does not exist/),
    ]);
  });

  it('reports a violation between the databases that persists, with its ids', async () => {
    const [devuelta] = await stack.query<{ total: string }>('select total::text as total from returns.devoluciones where venta_id = $1', [
      ventaId,
    ]);
    // Older than the minute the audit leaves to work in flight, so what it finds is not an event on its way.
    await stack.query(`update returns.devoluciones set updated_at = now() - interval '2 minutes' where venta_id = $1`, [ventaId]);
    await sales.query(`update sales.devoluciones_registradas set created_at = now() - interval '2 minutes' where venta_id = $1`, [ventaId]);
    const { rows } = await sales.query('update sales.ventas set monto_devuelto = 0 where id = $1 returning monto_devuelto', [ventaId]);
    expect(rows).toHaveLength(1);
    try {
      const { code, report } = await audit({ DATABASE_URL_SALES: salesDb.databaseUrl });
      expect(code).toBe(1);
      expect(violationsOf(report)).toEqual({
        'each sale counts its active returns and their amount': [
          `empresa ${a.id} venta ${ventaId}: counts 1 active returns for 0, returns hold 1 for ${devuelta!.total}`,
        ],
      });
    } finally {
      await sales.query('update sales.ventas set monto_devuelto = $2 where id = $1', [ventaId, devuelta!.total]);
    }
  });
});
