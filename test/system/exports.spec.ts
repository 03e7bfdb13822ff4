import { gunzipSync } from 'node:zlib';
import type { SeedOutput } from '@erp/back-office';
import { PartnerApiClient } from '@erp/client';
import { returnsAdminSubjects } from '@erp/contracts';
import { Stack, json } from '../support/stack';
import { eventually, tenant } from '@erp/testing';
import { API, SALES_KEY_A, SALES_KEY_B, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';

/* eslint-disable @typescript-eslint/no-explicit-any */

const TTL_MS = 15_000;

/**
 * Bulk exports on the real stack: the file the owning service writes from one snapshot, line by
 * line the bytes of each object's GET, ordered by id; its cursor hands over to delta sync; the
 * job survives its worker's death with one file; cancel, expiry, Range, isolation and the limit.
 */
describe('POST /exports, GET /exports/{id}/download', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;
  let b: SalesRefs;

  const post = async (body: unknown, key = SALES_KEY_A) => {
    const res = await stack.api(`${API}/exports`, {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, location: res.headers.get('location'), body: (await json(res)) as any };
  };
  const get = async (id: number, key = SALES_KEY_A) => {
    const res = await stack.api(`${API}/exports/${id}`, { key });
    return { status: res.status, body: (await json(res)) as any };
  };
  const completed = async (id: number, timeoutMs = 30_000) => {
    let last: any;
    await eventually(async () => {
      last = (await get(id)).body.data;
      expect(last.estado).toBe('completada');
    }, timeoutMs);
    return last;
  };
  const download = async (id: number, init: { key?: string; range?: string } = {}) => {
    const res = await stack.api(`${API}/exports/${id}/download`, {
      key: init.key ?? SALES_KEY_A,
      ...(init.range ? { headers: { Range: init.range } } : {}),
    });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const linesOf = (gz: Buffer) => {
    const text = gunzipSync(gz).toString('utf8');
    return text === '' ? [] : text.replace(/\n$/, '').split('\n');
  };
  /** The `data` of a GET exactly as the bytes the gateway sent. */
  const dataText = async (path: string) => {
    const res = await stack.api(`${API}${path}`, { key: SALES_KEY_A });
    expect(res.status).toBe(200);
    const text = await res.text();
    const head = '{"success":true,"data":';
    expect(text.startsWith(head)).toBe(true);
    return text.slice(head.length, text.lastIndexOf(',"meta":'));
  };
  const exportOf = async (body: unknown) => {
    const created = await post(body);
    expect(created.status).toBe(202);
    const done = await completed(created.body.data.id);
    const file = await download(done.id);
    expect(file.status).toBe(200);
    return { done, file, lines: linesOf(file.bytes) };
  };
  const filesOf = async (id: number) => (await stack.exportFiles()).filter((name) => name.includes(`.exportacion-${id}.`));
  /** The files the exports service recorded for a job (the store is listed above for what they may miss). */
  const recordsOf = async (id: number) =>
    (await stack.query<{ objeto: string }>('select objeto from exports.archivos where exportacion_id = $1 order by objeto', [id])).map(
      (r) => r.objeto,
    );

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'returns', 'subscriptions', 'exports'],
      exports: { EXPORT_TTL_MS: TTL_MS, EXPORT_POLL_MS: 200, EXPORT_LEASE_MS: 1_500, EXPORT_ORPHAN_SWEEP_MS: 500, EXPORT_MAX_ATTEMPTS: 50 },
    });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
    b = refsOf(seeded, 'b');
    for (let i = 0; i < 12; i++) {
      const estado = i % 3 === 0 ? 'Cotizacion' : 'Completada';
      expect((await postSale(stack, SALES_KEY_A, saleBody(a, { estado, observaciones: `venta ${i}` }))).status).toBe(201);
    }
    expect((await postSale(stack, SALES_KEY_B, saleBody(b))).status).toBe(201);
    const [venta] = await stack.query<{ id: number }>(
      'select id from sales.ventas where empresa_id = $1 and estado = $2 order by id limit 1',
      [a.id, 'Completada'],
    );
    const ctx = tenant(a.id, { requestId: 'exports-seed' });
    for (let k = 0; k < 2; k++)
      await stack.admin.request(
        returnsAdminSubjects,
        'returns.admin.create',
        {
          empresa_id: a.id,
          id_venta: venta!.id,
          fecha: '2026-03-11',
          tipo: 'devolucion',
          detalles: [{ id_producto: a.productos.laptop, cantidad: 0.5 }],
        } as never,
        ctx,
      );
  }, 120_000);
  afterAll(() => stack?.stop());

  it.each([
    ['sales', '/sales'],
    ['returns', '/returns'],
    ['inventory', '/inventory'],
  ])('exports every %s of the company, each line byte-identical to its GET, ordered by id', async (recurso, path) => {
    const { done, file, lines } = await exportOf({ recurso });
    const ids = lines.map((line) => (JSON.parse(line) as { id: number }).id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    for (let i = 0; i < lines.length; i++) expect(lines[i]).toBe(await dataText(`${path}/${ids[i]}`));
    const table = { sales: 'sales.ventas', returns: 'returns.devoluciones', inventory: 'inventory.productos' }[recurso]!;
    const { n } = (await stack.query<{ n: number }>(`select count(*)::int as n from ${table} where empresa_id = $1`, [a.id]))[0]!;
    expect(done).toMatchObject({
      recurso,
      estado: 'completada',
      objetos: n,
      bytes: file.bytes.length,
      descarga: `/exports/${done.id}/download`,
    });
    expect(file.headers.get('content-type')).toBe('application/gzip');
    expect(file.headers.get('content-length')).toBe(String(file.bytes.length));
    expect(typeof done.cursor).toBe('string');
  });

  it('announces a completed export to the company as the partner event export.completed', async () => {
    const { done } = await exportOf({ recurso: 'inventory' });
    await eventually(async () => {
      const page = (await json(await stack.api(`${API}/events?types=export.completed`, { key: SALES_KEY_A }))) as any;
      expect(page.data.find((e: any) => e.data.id === done.id)?.data).toEqual(done);
    }, 20_000);
    const other = (await json(await stack.api(`${API}/events?types=export.completed`, { key: SALES_KEY_B }))) as any;
    expect(other.data.map((e: any) => e.data.id)).not.toContain(done.id);
  });

  it('is created, awaited and streamed object by object by the typed client, which resumes a broken download', async () => {
    let broken = false;
    // The first download breaks after 100 bytes, as a dropped connection would.
    const flaky: typeof fetch = async (input, init) => {
      const res = await stack.fetch(input, init);
      if (broken || !String(input).endsWith('/download')) return res;
      broken = true;
      const reader = res.body!.getReader();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent >= 100) {
            await reader.cancel();
            return controller.error(new TypeError('terminated'));
          }
          const { done, value } = await reader.read();
          if (done) return controller.close();
          const part = value.subarray(0, 100 - sent);
          sent += part.length;
          controller.enqueue(part);
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const api = new PartnerApiClient({ baseUrl: `${stack.baseUrl}${API}`, apiKey: SALES_KEY_A, fetch: flaky });
    const created = await api.exports.create({ recurso: 'sales', filtros: { estado: 'Completada' } });
    expect(created.estado).toBe('en_cola');
    const done = await api.exports.wait(created.id, { intervalMs: 100 });
    expect(done.estado).toBe('completada');
    const objects: unknown[] = [];
    for await (const venta of api.exports.download(created.id)) objects.push(venta);
    expect(broken).toBe(true);
    expect(objects).toHaveLength(done.objetos!);
    expect(objects).toEqual(linesOf((await download(created.id)).bytes).map((line) => JSON.parse(line)));
  });

  it('applies the filters of the list, and refuses an unknown filter or resource by name', async () => {
    const { lines } = await exportOf({ recurso: 'sales', filtros: { estado: 'Cotizacion' } });
    const listed = (await json(await stack.api(`${API}/sales?estado=Cotizacion&per_page=200`, { key: SALES_KEY_A }))) as any;
    expect(lines.map((l) => JSON.parse(l).id)).toEqual(listed.data.map((s: any) => s.id).sort((x: number, y: number) => x - y));

    const unknown = await post({ recurso: 'sales', filtros: { estado: 'Completada', color: 'rojo' } });
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.body.details)).toContain('color');
    expect((await post({ recurso: 'clientes' })).status).toBe(422);
    expect((await post({ recurso: 'sales', filtros: { fecha_inicio: '2026-03-10', fecha_fin: '2026-03-01' } })).status).toBe(422);
  });

  it('resumes a broken download with Range', async () => {
    const { done, file } = await exportOf({ recurso: 'sales' });
    const cut = Math.floor(file.bytes.length / 3);
    const rest = await download(done.id, { range: `bytes=${cut}-` });
    expect(rest.status).toBe(206);
    expect(rest.headers.get('content-range')).toBe(`bytes ${cut}-${file.bytes.length - 1}/${file.bytes.length}`);
    expect(Buffer.concat([file.bytes.subarray(0, cut), rest.bytes]).equals(file.bytes)).toBe(true);
    const middle = await download(done.id, { range: 'bytes=10-19' });
    expect(middle.status).toBe(206);
    expect(middle.bytes.equals(file.bytes.subarray(10, 20))).toBe(true);
    const beyond = await download(done.id, { range: `bytes=${file.bytes.length}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${file.bytes.length}`);
  });

  it("answers 404 for another company's export, and lists only the company's, newest first", async () => {
    const { done } = await exportOf({ recurso: 'inventory' });
    expect((await get(done.id, SALES_KEY_B)).status).toBe(404);
    expect((await download(done.id, { key: SALES_KEY_B })).status).toBe(404);
    const del = await stack.api(`${API}/exports/${done.id}`, { key: SALES_KEY_B, method: 'DELETE' });
    expect(del.status).toBe(404);
    expect((await get(done.id)).body.data.estado).toBe('completada');
    const listA = (await json(await stack.api(`${API}/exports?per_page=200`, { key: SALES_KEY_A }))) as any;
    const ids = listA.data.map((e: any) => e.id);
    expect(ids).toContain(done.id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => y - x));
    const listB = (await json(await stack.api(`${API}/exports`, { key: SALES_KEY_B }))) as any;
    expect(listB.data.map((e: any) => e.id)).not.toContain(done.id);
  });

  it('hands over to delta sync: the export plus the changes after its cursor are every sale as it ends, under concurrent writes', async () => {
    let writing = true;
    const written: number[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const created = await postSale(stack, SALES_KEY_A, saleBody(a, { observaciones: `durante ${i}` }));
        expect(created.status).toBe(201);
        written.push(created.body.data.id);
        const id = written[Math.floor(written.length / 2)]!;
        await stack.api(`${API}/sales/${id}`, {
          key: SALES_KEY_A,
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ observaciones: `editada ${i}`, detalles: [{ id_producto: a.productos.laptop, cantidad: 1 }] }),
        });
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { done, lines } = await exportOf({ recurso: 'sales' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    writing = false;
    await writer;

    const { ids } = (
      await stack.query<{ ids: number[] }>('select array_agg(id order by id) as ids from sales.ventas where empresa_id = $1', [a.id])
    )[0]!;
    const final = new Map<number, unknown>();
    for (const id of ids) final.set(id, JSON.parse(await dataText(`/sales/${id}`)));
    // The export's lines, then what delta sync answers after its cursor, each sale's newest version
    // last. Delta sync answers a change once every older transaction has ended (of the whole
    // Postgres server): the loop follows the cursor until the merge is every sale as it ends.
    const merged = new Map<number, unknown>(lines.map((line) => [JSON.parse(line).id as number, JSON.parse(line)]));
    const matches = () => ids.length === merged.size && ids.every((id) => JSON.stringify(merged.get(id)) === JSON.stringify(final.get(id)));
    let cursor = done.cursor as string;
    for (const deadline = Date.now() + 30_000; !matches() && Date.now() < deadline;) {
      const res = await stack.api(`${API}/sales?order_by=updated_at&per_page=200&cursor=${cursor}`, { key: SALES_KEY_A });
      const page = (await json(res)) as any;
      for (const sale of page.data) merged.set(sale.id, sale);
      cursor = page.pagination.next_cursor ?? page.pagination.resume_cursor ?? cursor;
      if (!page.pagination.next_cursor) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...merged.keys()].sort((x, y) => x - y)).toEqual(ids);
    for (const id of ids) expect(merged.get(id)).toEqual(final.get(id));
    expect(written.length).toBeGreaterThan(0);
  }, 60_000);

  it('refuses the sixth running export with 409, and a cancelled one never gets a file', async () => {
    // With sales away the jobs stay queued: each attempt finds no one to write the file.
    await stack.stopService('sales');
    try {
      const running: number[] = [];
      for (let i = 0; i < 5; i++) {
        const created = await post({ recurso: 'sales' }, SALES_KEY_B);
        expect(created.status).toBe(202);
        expect(created.location).toBe(`${API}/exports/${created.body.data.id}`);
        running.push(created.body.data.id);
      }
      const sixth = await post({ recurso: 'sales' }, SALES_KEY_B);
      expect(sixth.status).toBe(409);
      expect(sixth.body.error).toContain('5 exportaciones en curso');
      // Another company is not limited by this one's exports.
      const other = await post({ recurso: 'inventory' });
      expect(other.status).toBe(202);

      const cancelled = await stack.api(`${API}/exports/${running[0]}`, { key: SALES_KEY_B, method: 'DELETE' });
      expect(cancelled.status).toBe(200);
      expect(((await json(cancelled)) as any).data).toMatchObject({ estado: 'cancelada', descarga: null });
      expect((await post({ recurso: 'sales' }, SALES_KEY_B)).status).toBe(202);
      await stack.startService('sales');
      for (const id of running.slice(1))
        await eventually(async () => expect((await get(id, SALES_KEY_B)).body.data.estado).toBe('completada'), 30_000);
      expect((await get(running[0]!, SALES_KEY_B)).body.data.estado).toBe('cancelada');
      expect((await download(running[0]!, { key: SALES_KEY_B })).status).toBe(409);
      expect(await filesOf(running[0]!)).toEqual([]);
    } finally {
      if (!stack.running.has('sales')) await stack.startService('sales');
    }
  }, 90_000);

  it('finishes an export whose worker died mid-export with one file holding every row', async () => {
    // The file's read waits behind this lock, so the worker dies while its owner is writing.
    const lock = await stack.hold('lock table sales.ventas in access exclusive mode');
    const created = await post({ recurso: 'sales' });
    const id = created.body.data.id as number;
    await eventually(async () => expect((await get(id)).body.data.estado).toBe('procesando'));
    const dead = stack.running.get('exports')!;
    stack.running.delete('exports');
    // A crash: no stop step runs, the lease is not given back, the connections are gone.
    dead.ctx.bus.nc.close().catch(() => undefined);
    await dead.ctx.db.destroy();
    await stack.startService('exports');
    await lock.release();
    const done = await completed(id);
    expect(done.error).toBeNull();
    const { intento } = (await stack.query<{ intento: number }>('select intento from exports.exportaciones where id = $1', [id]))[0]!;
    expect(intento).toBeGreaterThan(1);
    const lines = linesOf((await download(id)).bytes);
    const { n } = (await stack.query<{ n: number }>('select count(*)::int as n from sales.ventas where empresa_id = $1', [a.id]))[0]!;
    expect(lines).toHaveLength(n);
    expect(done.objetos).toBe(n);
    // The first attempt's file, if its owner put it once the lock went, is found in its record and
    // removed: only the export's own file stays. (A record whose file never came stays until the
    // store's age limit, by design; services/exports/test/export-files.int.spec.ts covers both.)
    const { objeto } = (await stack.query<{ objeto: string }>('select objeto from exports.exportaciones where id = $1', [id]))[0]!;
    await eventually(async () => {
      expect(await filesOf(id)).toEqual([objeto]);
      expect(await recordsOf(id)).toContain(objeto);
    }, 15_000);
    // Its ops server still listens: the stop steps of the dead replica close what is left.
    await dead.stop();
  }, 60_000);

  it(
    'removes the file at expira',
    async () => {
      const { done } = await exportOf({ recurso: 'returns' });
      expect(new Date(done.expira).getTime() - new Date(done.completada).getTime()).toBe(TTL_MS);
      expect(await filesOf(done.id)).toHaveLength(1);
      await eventually(async () => expect((await get(done.id)).body.data.descarga).toBeNull(), TTL_MS + 10_000);
      expect((await download(done.id)).status).toBe(404);
      expect(await filesOf(done.id)).toEqual([]);
      expect(await recordsOf(done.id)).toEqual([]);
    },
    TTL_MS + 40_000,
  );
});

describe('an export whose owner cannot write it', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'subscriptions', 'exports'],
      exports: { EXPORT_MAX_ATTEMPTS: 1, EXPORT_POLL_MS: 200 },
    });
    await stack.seed(salesFixture());
    // Sales stops: the attempt finds no one to write the file, and one attempt is all there is.
    await stack.stopService('sales');
  });
  afterAll(() => stack?.stop());

  it('ends fallida with the reason, no file, and the partner event export.failed', async () => {
    const res = await stack.api(`${API}/exports`, {
      key: SALES_KEY_A,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ recurso: 'sales' }),
    });
    expect(res.status).toBe(202);
    const { id } = ((await json(res)) as any).data;
    let failed: any;
    await eventually(async () => {
      failed = ((await json(await stack.api(`${API}/exports/${id}`, { key: SALES_KEY_A }))) as any).data;
      expect(failed.estado).toBe('fallida');
    });
    expect(failed).toMatchObject({ objetos: null, bytes: null, descarga: null, cursor: null });
    expect(failed.error).toContain('sales');
    expect((await stack.api(`${API}/exports/${id}/download`, { key: SALES_KEY_A })).status).toBe(409);
    expect(await stack.exportFiles()).toEqual([]);
    await eventually(async () => {
      const page = (await json(await stack.api(`${API}/events?types=export.failed`, { key: SALES_KEY_A }))) as any;
      expect(page.data.find((e: any) => e.data.id === id)?.data).toEqual(failed);
    }, 20_000);
  });
});
