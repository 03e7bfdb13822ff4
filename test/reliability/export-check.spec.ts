import pg from 'pg';
import { deleteObject } from '@erp/bus';
import { API_BASE } from '@erp/contracts';
import { saleBody } from '../support/sales-fixture';
import { Stack } from '../support/stack';
import { checkExports } from './support/exports';
import { companiesOf, reliabilityFixture, type Company, type CompanyRef } from './support/fixture';
import { call } from './support/http';

/**
 * Guarantee 15's check in the chaos run ("every completed export is one snapshot") reads every
 * export of the companies, not only those the crash phase asked for. In a full run that includes
 * the isolation sweep's (exports of returns filtered by the other company's sale) and what the
 * fuzzing did to them (`DELETE /exports/{id}` with company A's key and its sale ids 1 to 3, which
 * removes the file of a completed export, as documented): the check read a filtered export against
 * the unfiltered list, and a removed file as one that vanished. The full run of issue 35 (fuzz seed
 * 689383) broke it so, on exports 2, 3 and 4 of that sweep, with no fault involved.
 */
describe('the chaos run’s check of completed exports', () => {
  let stack: Stack;
  let companies: Record<CompanyRef, Company>;
  let db: pg.Client;

  const ask = async (company: Company, body: Record<string, unknown>): Promise<number> => {
    const answer = await call(`${stack.baseUrl}${API_BASE}/exports`, { method: 'POST', key: company.key, json: body });
    expect(answer.status).toBe(202);
    return answer.body.data.id as number;
  };
  const completed = async (company: Company, id: number): Promise<void> => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const estado = (await call(`${stack.baseUrl}${API_BASE}/exports/${id}`, { key: company.key })).body?.data?.estado;
      if (estado === 'completada') return;
      if (estado !== 'en_cola' && estado !== 'procesando') throw new Error(`export ${id} ended ${estado}`);
    }
    throw new Error(`export ${id} did not complete within 30 s`);
  };

  /**
   * Waits until the change feeds answer every sale and return written so far: a feed answers a
   * change once no older transaction runs anywhere on the server, other test files' included.
   */
  const feedsCaughtUp = async (): Promise<void> => {
    const { rows } = await db.query<{ x: string }>(
      'select greatest((select max(cambio_xid) from sales.ventas), (select max(cambio_xid) from returns.devoluciones))::text as x',
    );
    for (const deadline = Date.now() + 45_000; ; await new Promise((resolve) => setTimeout(resolve, 20))) {
      const { rows: horizon } = await db.query<{ xmin: string }>('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin');
      if (BigInt(horizon[0]!.xmin) > BigInt(rows[0]!.x)) return;
      if (Date.now() > deadline) throw new Error(`transactions older than ${rows[0]!.x} still running`);
    }
  };

  beforeAll(async () => {
    stack = await Stack.start({ gateway: { RATE_LIMIT_STANDARD: '1000000', RATE_LIMIT_DATE_FILTERED: '1000000' }, contract: false });
    companies = companiesOf(await stack.seed(reliabilityFixture()));
    db = new pg.Client({ connectionString: stack.iso.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('holds for the isolation sweep’s filtered exports and for the files the fuzzing’s DELETE removed, as in the full run', async () => {
    const { a, b } = companies;
    // The isolation sweep: each company's export of sales, and of its returns filtered by the other's sale.
    const sweep = [
      [b, await ask(b, { recurso: 'sales' })],
      [a, await ask(a, { recurso: 'returns', filtros: { id_venta: b.ventas.v1 } })],
      [a, await ask(a, { recurso: 'sales' })],
      [b, await ask(b, { recurso: 'returns', filtros: { id_venta: a.ventas.v1 } })],
    ] as const;
    for (const [company, id] of sweep) await completed(company, id);
    // The fuzzing, with company A's key: its exports' files removed.
    for (const [, id] of sweep.filter(([company]) => company === a)) {
      const removed = await call(`${stack.baseUrl}${API_BASE}/exports/${id}`, { method: 'DELETE', key: a.key });
      expect({ id, status: removed.status, descarga: removed.body?.data?.descarga }).toEqual({ id, status: 200, descarga: null });
    }

    await feedsCaughtUp();
    const [result] = await checkExports(stack.baseUrl, companies);
    expect(result!.violations).toEqual([]);
    // B's two compared (its returns under the filter: none of A's sale, though B has a return); A's two counted apart.
    expect(result!.checked).toBe(2);
    expect(result!.name).toContain('4 completada; 2 whose file was removed (DELETE or expiry)');
  });

  it('still finds a file gone while the API offers it, an object a cursor hands over past under the export’s filters, and leaves a changing filter uncompared', async () => {
    const { b } = companies;
    const vanished = await ask(b, { recurso: 'sales' });
    const passed = await ask(b, { recurso: 'sales', filtros: { updated_since: '2000-01-01T00:00:00Z' } });
    const changing = await ask(b, { recurso: 'sales', filtros: { estado: 'Completada' } });
    for (const id of [vanished, passed, changing]) await completed(b, id);

    // The file removed from the store behind the job's back.
    const { rows } = await db.query<{ objeto: string }>('select objeto from exports.exportaciones where id = $1', [vanished]);
    expect(await deleteObject(stack.admin, rows[0]!.objeto)).toBe(true);
    // A sale made after the snapshot, and the export's cursor moved past it, as a cursor taken outside the snapshot would be.
    const sale = await call(`${stack.baseUrl}${API_BASE}/sales`, {
      method: 'POST',
      key: b.key,
      json: saleBody(b, { referencia_externa: 'EXPORT-CHECK-1', detalles: [{ id_producto: b.productos.mouse, cantidad: 1 }] }),
    });
    expect(sale.status).toBe(201);
    await feedsCaughtUp();
    let resume = '';
    for (let next: string | undefined = '', first = true; first || next; first = false) {
      const page = await call(`${stack.baseUrl}${API_BASE}/sales?order_by=updated_at&per_page=200${next ? `&cursor=${next}` : ''}`, {
        key: b.key,
      });
      resume = page.body.pagination.resume_cursor as string;
      next = page.body.pagination.has_more ? (page.body.pagination.next_cursor as string) : undefined;
    }
    await db.query('update exports.exportaciones set cursor = $1 where id = $2', [resume, passed]);

    const [result] = await checkExports(stack.baseUrl, companies);
    // Newest export first, as GET /exports lists them.
    expect(result!.violations).toEqual([
      `b: export ${passed} of sales: 1 objects neither in the file nor after its cursor (${sale.body.data.id})`,
      expect.stringMatching(
        new RegExp(`^b: export ${vanished} of sales: download failed 5 times: status 404: .*exportacion_no_encontrada`),
      ),
    ]);
    expect(result!.name).toContain('1 filtered by what an object can stop matching, not compared');
  }, 90_000);
});
