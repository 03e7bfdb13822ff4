import type { SeedOutput } from '@erp/back-office';
import { returnsAdminSubjects } from '@erp/contracts';
import { Stack, json } from '../support/stack';
import { API, SALES_KEY_A, SALES_KEY_B, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Delta sync on GET /sales and /returns: a partner follows `order_by=updated_at` cursors while rows
 * are created and changed concurrently (a sale's edit holds its transaction open across a call to
 * inventory), and ends with the final version of every row, having never read one version twice.
 */
describe('GET /sales and /returns with updated_since, order_by=updated_at and cursors', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;

  const get = async (query: string, key = SALES_KEY_A) => {
    const res = await stack.api(`${API}/sales?${query}`, { key });
    return { status: res.status, body: (await json(res)) as any };
  };
  const pendiente = (observaciones: string) =>
    postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, {
        estado: 'Pendiente',
        id_cliente: a.clientes.libre,
        observaciones,
        detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }],
      }),
    );
  const edit = (id: number, observaciones: string, cantidad: number) =>
    stack.api(`${API}/sales/${id}`, {
      key: SALES_KEY_A,
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ observaciones, detalles: [{ id_producto: a.productos.mouse, cantidad }] }),
    });

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns'] });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
  });
  afterAll(() => stack?.stop());

  /**
   * Follows the list by change until `done()` and every row's last version read is its final one
   * (a change passed over would never come: the loop then ends at its deadline and the test fails).
   */
  const follow = async <R>(path: string, version: (row: any) => R, done: () => boolean, final: () => Promise<Map<number, R>>) => {
    const read: Array<{ id: number; version: R }> = [];
    let cursor: string | undefined;
    const lastRead = () => new Map(read.map((r) => [r.id, r.version]));
    const deadline = Date.now() + 45_000;
    for (;;) {
      const page = await stack.api(`${API}${path}&order_by=updated_at&per_page=4${cursor ? `&cursor=${cursor}` : ''}`, {
        key: SALES_KEY_A,
      });
      expect(page.status).toBe(200);
      const body = (await json(page)) as any;
      read.push(...body.data.map((row: any) => ({ id: row.id, version: version(row) })));
      cursor = body.pagination.next_cursor ?? body.pagination.resume_cursor ?? cursor;
      if (body.pagination.next_cursor) continue;
      if (done()) {
        const seen = lastRead();
        if ([...(await final())].every(([id, v]) => seen.get(id) === v)) break;
      }
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { read, lastRead };
  };

  it('refuses a cursor it did not issue, or one without order_by=updated_at, and a bad updated_since', async () => {
    expect((await get('order_by=updated_at&cursor=nonsense')).status).toBe(400);
    expect((await get('cursor=WyIxIiwxXQ')).status).toBe(400);
    const bad = await get('order_by=updated_at&updated_since=ayer');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.details)).toEqual(['updated_since']);
  });

  it('pages through concurrent creations and edits without skipping a change or repeating a version', async () => {
    const since = new Date().toISOString();
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await pendiente('v0')).body.data.id);

    let done = false;
    const writer = (async () => {
      let version = 1;
      // A sale is edited by one worker only (its position in `ids`, modulo 3), so its labels are
      // taken in the order its edits commit. Two workers editing one sale at once could commit v3
      // before v2: the feed would rightly give 3 then 2, and the labels could not tell order apart.
      const workers = [0, 1, 2].map(async (w) => {
        for (let k = 0; k < 12; k++) {
          if ((k + w) % 4 === 0) {
            const created = await pendiente('v0');
            expect(created.status).toBe(201);
            ids.push(created.body.data.id);
          } else {
            const mine = ids.filter((_, i) => i % 3 === w);
            const id = mine[(k * 7) % mine.length]!;
            const res = await edit(id, `v${version++}`, 1 + (k % 3));
            expect(res.status).toBe(200);
          }
        }
      });
      await Promise.all(workers);
      done = true;
    })();

    const finalVersions = async () => {
      const all = await get('per_page=200&estado=Pendiente');
      return new Map<number, string>(all.body.data.filter((s: any) => ids.includes(s.id)).map((s: any) => [s.id, s.observaciones]));
    };
    const { read, lastRead } = await follow(
      `/sales?updated_since=${encodeURIComponent(since)}`,
      (row) => row.observaciones as string,
      () => done,
      finalVersions,
    );
    await writer;

    const final = await finalVersions();
    expect(final.size).toBe(ids.length);
    // Nothing skipped: the last version read of every sale is its final one.
    expect(Object.fromEntries(lastRead())).toEqual(Object.fromEntries(final));
    // Nothing repeated: no version of a sale was read twice, and versions of a sale only move forward.
    const keys = read.map((r) => `${r.id}:${r.version}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    for (const id of ids) {
      const versions = read.filter((r) => r.id === id).map((r) => Number(r.version.slice(1)));
      expect(versions).toEqual([...versions].sort((x, y) => x - y));
    }
    // Another company's key sees none of it.
    expect((await get(`updated_since=${encodeURIComponent(since)}&order_by=updated_at`, SALES_KEY_B)).body.data).toEqual([]);
  });

  it('follows returns created and annulled concurrently without skipping or repeating one', async () => {
    const since = new Date().toISOString();
    const venta = await postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 40 }] }));
    expect(venta.status).toBe(201);
    const ctx = { requestId: 'delta-sync' };
    const ids: number[] = [];
    let done = false;
    const writer = (async () => {
      await Promise.all(
        [0, 1, 2].map(async (w) => {
          for (let k = 0; k < 6; k++) {
            const created = await stack.admin.request(
              returnsAdminSubjects,
              'returns.admin.create',
              {
                empresa_id: a.id,
                id_venta: venta.body.data.id,
                fecha: '2026-03-11',
                tipo: 'devolucion',
                detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }],
              } as never,
              ctx,
            );
            ids.push(created.devolucion.id);
            if ((k + w) % 2 === 0)
              await stack.admin.request(
                returnsAdminSubjects,
                'returns.admin.annul',
                { empresa_id: a.id, id_devolucion: ids[(k * 5 + w) % ids.length]! },
                ctx,
              );
          }
        }),
      );
      done = true;
    })();
    const final = async () => {
      const all = (await json(await stack.api(`${API}/returns?per_page=200&id_venta=${venta.body.data.id}`, { key: SALES_KEY_A }))) as any;
      return new Map<number, string>(all.data.map((r: any) => [r.id, r.estado]));
    };
    const { read, lastRead } = await follow(
      `/returns?updated_since=${encodeURIComponent(since)}`,
      (row) => row.estado as string,
      () => done,
      final,
    );
    await writer;
    const expected = await final();
    expect(expected.size).toBe(18);
    expect(Object.fromEntries(lastRead())).toEqual(Object.fromEntries(expected));
    const keys = read.map((r) => `${r.id}:${r.version}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    expect((await stack.api(`${API}/returns?cursor=WyIxIiwxXQ`, { key: SALES_KEY_A })).status).toBe(400);
  });

  it('follows the stock of products moved by concurrent sales without skipping or repeating a state', async () => {
    const since = new Date().toISOString();
    const productos = ['mouse', 'libro', 'cemento'].map((p) => a.productos[p]!);
    let done = false;
    const writer = (async () => {
      await Promise.all(
        [0, 1, 2].map(async (w) => {
          for (let k = 0; k < 8; k++) {
            const sale = await postSale(
              stack,
              SALES_KEY_A,
              saleBody(a, { detalles: [{ id_producto: productos[(k + w) % 3]!, cantidad: 1 + (k % 2) }] }),
            );
            expect(sale.status).toBe(201);
          }
        }),
      );
      done = true;
    })();
    const stockState = (row: any) => JSON.stringify(row.inventarios.map((i: any) => [i.id_bodega, i.stock]));
    const final = async () => {
      const rows = await Promise.all(
        productos.map(async (id) => (await json(await stack.api(`${API}/inventory/${id}`, { key: SALES_KEY_A }))) as any),
      );
      return new Map<number, string>(rows.map((r) => [r.data.id, stockState(r.data)]));
    };
    const { read, lastRead } = await follow(`/inventory?updated_since=${encodeURIComponent(since)}`, stockState, () => done, final);
    await writer;
    const seen = lastRead();
    const expected = await final();
    expect(productos.map((id) => seen.get(id))).toEqual(productos.map((id) => expected.get(id)));
    const keys = read.map((r) => `${r.id}:${r.version}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    expect((await stack.api(`${API}/inventory?cursor=WyIxIiwxXQ`, { key: SALES_KEY_A })).status).toBe(400);
  });
});
