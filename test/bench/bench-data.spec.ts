import { createHash } from 'node:crypto';
import pg from 'pg';
import { DAILY_SUMMARY_TRIGGERS } from '@erp/sales';
import { auditBooks } from '@erp/back-office';
import { createDb } from '@erp/db';
import { isolate, type Isolation } from '@erp/testing';
import { summarizeInventario } from '../../services/inventory/src/db/producto-list.repository';
import type { InventoryDb } from '../../services/inventory/src/db/tables';
import { productsWithStaleDerivedValues, summarizeByDirectAggregate } from '../../services/inventory/test/summary-oracle';
import { generateBenchData, type BenchDataResult } from './data/generate';
import { benchWebhookIntegration } from './data/loaders/webhook-ingest.loader';
import { silentProgress } from './data/progress';

/** The benchmark's data generator at a tiny scale, so it cannot rot between benchmark runs. */
describe('generateBenchData', () => {
  let iso: Isolation;
  let client: pg.Client;
  let sut: BenchDataResult;

  beforeAll(async () => {
    iso = await isolate('bench');
    sut = await generateBenchData({
      databaseUrl: iso.databaseUrl,
      scale: { sales: 200, products: 50, warehouses: 3, returns: 20, packages: 40 },
      seed: 7,
      recreate: false,
      progress: silentProgress,
      today: '2026-01-31',
    });
    client = new pg.Client({ connectionString: iso.databaseUrl });
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await iso?.drop();
  });

  const count = async (table: string, where = 'true') =>
    Number((await client.query(`select count(*) as n from ${table} where ${where}`)).rows[0].n);

  it('loads a large company beside two smaller ones, each with its own API key', async () => {
    expect(sut.companies.map((c) => c.clave)).toEqual(['bench-grande', 'bench-mediana', 'bench-pequena']);
    for (const company of sut.companies) {
      const hash = createHash('sha256').update(company.apiKey).digest();
      const { rows } = await client.query('select empresa_id from gateway.api_keys where key_hash = $1 and activo', [hash]);
      expect(rows).toEqual([{ empresa_id: company.empresaId }]);
    }
  });

  it('holds the books’ invariants (the operators’ audit runs clean on it)', async () => {
    const results = await auditBooks({ databaseUrl: iso.databaseUrl, inFlightMs: 0 });
    expect(results.filter((r) => r.violations.length > 0)).toEqual([]);
    expect(results.find((r) => r.name === 'each sale counts its active returns and their amount')!.checked).toBeGreaterThan(0);
  });

  it('reports the rows that are in the tables', async () => {
    expect(Object.keys(sut.counts).length).toBeGreaterThan(0);
    for (const [table, rows] of Object.entries(sut.counts)) expect(await count(table)).toBe(rows);
    // 50 products in the large company, at least 10 in each smaller one.
    expect(sut.counts['inventory.productos']).toBe(70);
  });

  it('stocks every physical product in every warehouse of its own company', async () => {
    const expected = Number(
      (
        await client.query(
          `select count(*) as n from inventory.productos p join inventory.bodegas b on b.empresa_id = p.empresa_id where p.tipo = 'Producto'`,
        )
      ).rows[0].n,
    );
    expect(await count('inventory.inventarios')).toBe(expected);
    expect(await count('inventory.inventarios i join inventory.productos p on p.id = i.producto_id', `p.empresa_id <> i.empresa_id`)).toBe(
      0,
    );
  });

  it('keeps the stock equal to the sum of its ledger movements', async () => {
    if (!('inventory.movimientos' in sut.counts)) return;
    const { rows } = await client.query(`
      select count(*) as n from inventory.inventarios i
      where i.stock <> coalesce((select sum(m.cantidad) from inventory.movimientos m where m.producto_id = i.producto_id and m.bodega_id = i.bodega_id), 0)`);
    expect(Number(rows[0].n)).toBe(0);
  });

  it('fills the inventory summary counters with exactly the aggregate of the loaded stock, triggers back on', async () => {
    if (!('inventory.resumen_inventario' in sut.counts)) return;
    const db = createDb<InventoryDb>({ connectionString: iso.databaseUrl, max: 1 });
    try {
      const inventory = db.withSchema('inventory');
      for (const company of sut.companies) {
        const summary = await summarizeInventario(inventory, company.empresaId);
        expect(summary.totals.total).toBeGreaterThan(0);
        expect(summary).toEqual(await summarizeByDirectAggregate(inventory, company.empresaId));
      }
      expect(await productsWithStaleDerivedValues(inventory)).toEqual([]);
    } finally {
      await db.destroy();
    }
    const { rows } = await client.query(`
      select count(*)::int as n, (count(*) filter (where tgenabled <> 'O'))::int as off from pg_trigger
       where tgrelid in ('inventory.productos'::regclass, 'inventory.inventarios'::regclass) and not tgisinternal`);
    // The summary's six, the delta sync's change stamp on each table, and whether a new stock entry is counted.
    expect(rows[0]).toEqual({ n: 9, off: 0 });
  });

  it('writes packages whose totals add up, linked to the seller with their advisor code', async () => {
    expect(await count('packages.paquetes', 'total <> precio + cuenta_a_terceros + otros')).toBe(0);
    expect(
      await count(
        'packages.paquetes p join gateway.usuarios u on u.id = p.usuario_id',
        'u.codigo <> p.codigo_asesor or u.empresa_id <> p.empresa_id',
      ),
    ).toBe(0);
  });

  it('writes sales with three lines whose amounts add up to the sale', async () => {
    if (!('sales.ventas' in sut.counts)) return;
    expect(sut.counts['sales.venta_detalles']).toBe(3 * sut.counts['sales.ventas']!);
    const { rows } = await client.query(`
      select count(*) as n from sales.ventas v
      cross join lateral (select sum(d.sub_total) s, sum(d.iva) i, sum(d.total) t, sum(d.descuento) d from sales.venta_detalles d where d.venta_id = v.id) l
      where (v.sub_total, v.iva, v.total, v.descuento) is distinct from (l.s, l.i, l.t, l.d)`);
    expect(Number(rows[0].n)).toBe(0);
    expect(await count('sales.ventas', `estado = 'Pendiente' and cliente_id is null`)).toBe(0);
  });

  it('fills the daily summary with exactly the aggregate of the loaded sales', async () => {
    if (!('sales.ventas' in sut.counts)) return;
    expect(sut.counts['sales.ventas_resumen_diario']).toBeGreaterThan(0);
    const { rows } = await client.query(`
      with a as (
        select empresa_id, fecha, estado, documento_id, count(*)::int as cantidad, sum(total) as total, sum(iva) as iva, sum(descuento) as descuento
          from sales.ventas group by empresa_id, fecha, estado, documento_id)
      select count(*)::int as n from a full join sales.ventas_resumen_diario r using (empresa_id, fecha, estado, documento_id)
       where (a.cantidad, a.total, a.iva, a.descuento) is distinct from (r.cantidad, r.total, r.iva, r.descuento)`);
    expect(rows[0].n).toBe(0);
    // The loader turned the summary's triggers off for its COPY: they must be on again.
    const { rows: triggers } = await client.query(
      `select tgname from pg_trigger where tgrelid = 'sales.ventas'::regclass and not tgisinternal and tgenabled = 'O' order by tgname`,
    );
    expect(triggers.map((t) => t.tgname)).toEqual([...DAILY_SUMMARY_TRIGGERS, 'ventas_cambio'].sort());
  });

  it('numbers each document type without gaps and leaves its counter on the next number', async () => {
    if (!('sales.ventas' in sut.counts)) return;
    const { rows } = await client.query(`
      select d.id, d.correlativo, count(v.id)::int as n, coalesce(max(v.numero), 0) as max
      from sales.documentos d left join sales.ventas v on v.documento_id = d.id group by d.id`);
    for (const doc of rows)
      expect({ id: doc.id, counter: doc.correlativo, max: doc.max }).toEqual({ id: doc.id, counter: doc.n + 1, max: doc.n });
  });

  it('returns a unit of completed sales of the same company, numbered without gaps', async () => {
    if (!('returns.devoluciones' in sut.counts)) return;
    expect(sut.counts['returns.devoluciones']).toBeGreaterThan(0);
    expect(sut.counts['returns.devolucion_detalles']).toBe(sut.counts['returns.devoluciones']);
    const { rows } = await client.query(`
      select count(*)::int as n from returns.devoluciones r
      join returns.devolucion_detalles l on l.devolucion_id = r.id
      join sales.ventas v on v.id = r.venta_id
      join sales.venta_detalles d on d.id = l.venta_detalle_id
      where v.empresa_id <> r.empresa_id or v.estado <> 'Completada' or d.venta_id <> v.id or d.id_producto <> l.id_producto
         or r.fecha < v.fecha or r.total <> l.total or l.cantidad > d.cantidad`);
    expect(rows[0].n).toBe(0);
    const { rows: docs } = await client.query(`
      select d.correlativo, count(r.id)::int as n, coalesce(max(r.numero), 0) as max
      from returns.documentos d left join returns.devoluciones r on r.documento_id = d.id group by d.id`);
    for (const doc of docs) expect({ counter: doc.correlativo, max: doc.max }).toEqual({ counter: doc.n + 1, max: doc.n });
  });

  it('gives each company a WooCommerce integration whose token resolves to it and issues on its own branch', async () => {
    if (!('webhook_ingest.integraciones' in sut.counts)) return;
    for (const company of sut.companies) {
      const hash = createHash('sha256').update(benchWebhookIntegration(company.clave).token).digest();
      const { rows } = await client.query(
        `select w.empresa_id, d.sucursal_id = w.sucursal_id as same_branch, b.sucursal_id = w.sucursal_id as warehouse_of_branch
           from webhook_ingest.integraciones w join sales.documentos d on d.id = w.documento_id join inventory.bodegas b on b.id = w.bodega_id
          where w.token_hash = $1`,
        [hash],
      );
      expect(rows).toEqual([{ empresa_id: company.empresaId, same_branch: true, warehouse_of_branch: true }]);
    }
  });

  it('moves every identity past the loaded ids, so the services insert after them', async () => {
    for (const table of ['gateway.empresas', 'inventory.productos', 'packages.paquetes', 'sales.ventas', 'returns.devoluciones']) {
      const { rows } = await client.query(`select nextval(pg_get_serial_sequence($1, 'id')) > (select max(id) from ${table}) as ok`, [
        table,
      ]);
      expect(rows[0].ok).toBe(true);
    }
  });
});

/**
 * The same generator with the sales schema in a database of its own (as `DATABASE_URL_SALES` puts
 * it for the services): a statement cannot cross databases, so what one schema derives from
 * another's rows (a sale's count of its returns) is read in one and written in the other.
 */
describe('generateBenchData with sales in a database of its own', () => {
  let iso: Isolation;
  let salesIso: Isolation;
  let sut: BenchDataResult;

  beforeAll(async () => {
    iso = await isolate('bench');
    salesIso = await isolate('benchsales');
    sut = await generateBenchData({
      databaseUrl: iso.databaseUrl,
      databaseUrls: { sales: salesIso.databaseUrl },
      scale: { sales: 200, products: 50, warehouses: 3, returns: 20, packages: 40 },
      seed: 7,
      recreate: false,
      progress: silentProgress,
      today: '2026-01-31',
    });
  }, 120_000);

  afterAll(async () => {
    await iso?.drop();
    await salesIso?.drop();
  });

  const tablesOf = async (databaseUrl: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(
        `select table_schema || '.' || table_name as name from information_schema.tables
          where table_schema in ('gateway', 'inventory', 'packages', 'sales', 'returns', 'webhook_ingest')`,
      );
      return new Set(rows.map((r) => r.name));
    } finally {
      await client.end();
    }
  };

  it('migrates and loads the sales schema only in its database, the others only in theirs', async () => {
    const [shared, sales] = await Promise.all([tablesOf(iso.databaseUrl), tablesOf(salesIso.databaseUrl)]);
    const loaded = Object.keys(sut.counts);
    expect(loaded.filter((t) => t.startsWith('sales.'))).toContain('sales.ventas');
    for (const table of loaded) {
      const home = table.startsWith('sales.') ? 'sales' : 'shared';
      expect({ table, shared: shared.has(table), sales: sales.has(table) }).toEqual({
        table,
        shared: home === 'shared',
        sales: home === 'sales',
      });
    }
  });

  it('holds the books’ invariants across the two databases: every sale counts its returns', async () => {
    const results = await auditBooks({
      databaseUrl: iso.databaseUrl,
      databaseUrls: { sales: salesIso.databaseUrl },
      inFlightMs: 0,
      confirmAfterMs: 0,
    });
    expect(results.filter((r) => r.violations.length > 0)).toEqual([]);
    expect(results.find((r) => r.name === 'each sale counts its active returns and their amount')!.checked).toBeGreaterThan(0);
    expect(sut.counts['returns.devoluciones']).toBeGreaterThan(0);
  });
});
