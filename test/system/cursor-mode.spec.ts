import { Stack, json } from '../support/stack';
import { eventually } from '@erp/testing';
import { API, SALES_KEY_A, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Cursor mode (`order_by=updated_at` or `cursor`) of GET /sales, /returns and /inventory: what it
 * cannot honour is refused by name instead of ignored, its pagination says only what is true of a
 * page read by change, and the inventory's `updated_at` is the watermark its filter uses.
 */
describe('Cursor mode of the lists without traps', () => {
  let stack: Stack;
  let a: SalesRefs;

  const get = async (path: string) => {
    const res = await stack.api(`${API}${path}`, { key: SALES_KEY_A });
    return { status: res.status, body: (await json(res)) as any };
  };

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns'] });
    a = refsOf(await stack.seed(salesFixture()), 'a');
    const sold = await postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] }));
    expect(sold.status).toBe(201);
  });
  afterAll(() => stack?.stop());

  it('refuses page in cursor mode, naming it, on every list that has one', async () => {
    const { pagination } = (await get('/sales?order_by=updated_at&per_page=1')).body;
    for (const path of [
      '/sales?order_by=updated_at&page=2',
      `/sales?order_by=updated_at&cursor=${pagination.resume_cursor}&page=1`,
      '/returns?order_by=updated_at&page=2',
      '/inventory?order_by=updated_at&page=1',
    ]) {
      const res = await get(path);
      expect({ path, status: res.status, details: Object.keys(res.body.details) }).toEqual({ path, status: 400, details: ['page'] });
      expect(res.body.details.page[0]).toMatch(/modo cursor/);
    }
  });

  it('refuses order_direction=desc in cursor mode, naming it, and accepts asc', async () => {
    for (const list of ['/sales', '/inventory']) {
      const desc = await get(`${list}?order_by=updated_at&order_direction=desc`);
      expect(desc.status).toBe(400);
      expect(Object.keys(desc.body.details)).toEqual(['order_direction']);
      const both = await get(`${list}?order_by=updated_at&order_direction=desc&page=3`);
      expect(Object.keys(both.body.details).sort()).toEqual(['order_direction', 'page']);
      expect((await get(`${list}?order_by=updated_at&order_direction=asc`)).status).toBe(200);
      // Outside cursor mode both still page and order as before.
      const paged = await get(`${list}?page=2&per_page=1&order_direction=desc`);
      expect(paged.status).toBe(200);
      expect(paged.body.pagination).toMatchObject({ current_page: 2, per_page: 1 });
    }
  });

  it('refuses updated_since outside cursor mode, where it would not filter', async () => {
    for (const list of ['/sales', '/returns', '/inventory']) {
      const res = await get(`${list}?updated_since=2026-01-01T00:00:00Z`);
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual({ updated_since: ['Solo se usa en modo cursor: agregue order_by=updated_at'] });
      expect((await get(`${list}?updated_since=2026-01-01T00:00:00Z&order_by=updated_at`)).status).toBe(200);
    }
  });

  it('answers only cursor fields in cursor mode, next_cursor until the end and resume_cursor always', async () => {
    for (const list of ['/sales', '/returns', '/inventory']) {
      let cursor: string | undefined;
      const pages: any[] = [];
      for (let n = 0; n < 50; n++) {
        const res = await get(`${list}?order_by=updated_at&per_page=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        pages.push(res.body.pagination);
        expect(Object.keys(res.body.pagination).sort()).toEqual(['has_more', 'next_cursor', 'per_page', 'resume_cursor']);
        expect(res.body.pagination.per_page).toBe(2);
        expect(typeof res.body.pagination.resume_cursor).toBe('string');
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        if (!res.body.pagination.has_more) break;
        expect(res.body.pagination.next_cursor).toBe(res.body.pagination.resume_cursor);
        cursor = res.body.pagination.next_cursor;
      }
      expect(pages.at(-1)).toMatchObject({ has_more: false, next_cursor: null });
      // Resuming at the end answers nothing new and the same resume point.
      const idle = await get(`${list}?order_by=updated_at&per_page=2&cursor=${pages.at(-1).resume_cursor}`);
      expect(idle.body.data).toEqual([]);
      expect(idle.body.pagination.resume_cursor).toBe(pages.at(-1).resume_cursor);
    }
    // The feed answers changes once every transaction older than them (on the whole server) has ended.
    await eventually(
      async () => expect((await get('/inventory?order_by=updated_at&per_page=2')).body.pagination.has_more).toBe(true),
      30_000,
    );
  });

  it('moves a product’s updated_at with its stock, so a watermark from what was read moves forward', async () => {
    const all = (await get('/inventory?per_page=200')).body.data as any[];
    const watermark = all
      .map((p) => p.updated_at as string)
      .sort()
      .at(-1)!;
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later millisecond than the watermark
    const sold = await postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: a.productos.libro, cantidad: 2 }] }));
    expect(sold.status).toBe(201);

    // Read by change from the watermark, once the feed's horizon (any transaction of the server) passes the sale.
    let libro: any;
    await eventually(async () => {
      const since = await get(`/inventory?order_by=updated_at&updated_since=${encodeURIComponent(watermark)}&per_page=200`);
      expect(since.status).toBe(200);
      const changed = since.body.data as any[];
      // The filter and the answer use one timestamp: nothing older than the watermark comes back.
      expect(changed.filter((p) => p.updated_at < watermark)).toEqual([]);
      libro = changed.find((p) => p.id === a.productos.libro);
      expect(libro?.updated_at > watermark).toBe(true);
      // The newest updated_at read is the next watermark: it moved forward, and the sold product is last by change.
      expect(
        changed
          .map((p) => p.updated_at as string)
          .sort()
          .at(-1)! > watermark,
      ).toBe(true);
      expect(changed.at(-1).id).toBe(a.productos.libro);
    }, 30_000);
    // The product's own GET answers the same moment, and the stock the sale left.
    const detail = (await get(`/inventory/${a.productos.libro}`)).body.data;
    expect(detail.updated_at).toBe(libro.updated_at);
    const stock = (p: any) => p.inventarios.reduce((sum: number, i: any) => sum + i.stock, 0);
    expect(stock(libro)).toBe(stock(all.find((p) => p.id === a.productos.libro)) - 2);
  });
});
