import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { API_BASE, salesAdminSubjects } from '@erp/contracts';
import { apiRoutes } from '@erp/gateway';
import { Stack, json } from '../support/stack';
import { eventually } from '@erp/testing';

const KEY = 'demo_4f9c2b7e1a6d8305c2e9b1f7a4d6c8e0';
const HOUR = 3_600_000;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it came over the wire (compressed when `content-encoding` says so). */
  wire: Buffer;
}

/** One GET with exactly the headers given: fetch would add and strip `Accept-Encoding` on its own. */
function get(baseUrl: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${KEY}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, wire: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function decoded(answer: Answer): unknown {
  const encoding = answer.headers['content-encoding'];
  const text = encoding === 'gzip' ? gunzipSync(answer.wire) : encoding === 'br' ? brotliDecompressSync(answer.wire) : answer.wire;
  const body = JSON.parse(text.toString('utf8')) as { meta?: { timestamp?: string } };
  // The moment of the answer is the one part of a body that differs between two reads.
  if (body.meta) delete body.meta.timestamp;
  return body;
}

/** The quota page `body` as it reads with the count `answer` was given. */
function withCount(body: unknown, answer: Answer): unknown {
  const remaining = Number(answer.headers['x-ratelimit-remaining']);
  const page = body as { data: Record<string, unknown> };
  return { ...page, data: { ...page.data, remaining_requests: remaining, requests_used: 1000 - remaining } };
}

describe('compressed and conditional reads', () => {
  let stack: Stack;
  let redis: Redis;
  /** Every GET of the partner API with a path of real ids of the demo company. */
  let paths: string[];
  const now = Date.UTC(2026, 10, 21, 14, 20, 0);
  const counterKey = async () => {
    const sql = "select empresa_id as id from gateway.api_keys where key_hash = sha256(convert_to($1, 'UTF8'))";
    const [{ id }] = (await stack.query<{ id: number }>(sql, [KEY])) as [{ id: number }];
    return `${stack.iso.redisKeyPrefix}:rl:empresa:${id}:${Math.floor(now / HOUR) * 3600}`;
  };

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'sales', 'returns', 'subscriptions', 'exports', 'webhook-ingest'],
      gatewayOptions: { clock: () => now },
    });
    const demo = JSON.parse(readFileSync(join(__dirname, '../fixtures/demo.json'), 'utf8')) as { empresas: Array<Record<string, unknown>> };
    const seeded = await stack.seed(demo);
    redis = new Redis(stack.iso.redisUrl);
    const created = await stack.api(`${API_BASE}/event-subscriptions`, {
      key: KEY,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/erp-events', events: ['sale.created'] }),
    });
    const suscripcion = (await json(created)).data.id as number;
    const exported = await stack.api(`${API_BASE}/exports`, {
      key: KEY,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ recurso: 'inventory', filtros: {} }),
    });
    const exportacion = (await json(exported)).data.id as number;
    // Finished first: a running export's answer changes, and so would its ETag.
    await eventually(async () => {
      const res = await stack.api(`${API_BASE}/exports/${exportacion}`, { key: KEY });
      expect((await json(res)).data.estado).toBe('completada');
    }, 30_000);
    // At rest: the events of the seed are all in the event log, so no read below sees it grow.
    await stack.settled();
    const ids: Record<string, number> = {
      '/inventory/:id': (seeded.empresas.demo!.productos as Record<string, number>).laptop!,
      '/sales/:id': (seeded.empresas.demo!.ventas as Record<string, number>).v1!,
      '/returns/:id': (seeded.empresas.demo!.devoluciones as Record<string, number>).d1!,
      '/event-subscriptions/:id': suscripcion,
      '/event-subscriptions/:id/deliveries': suscripcion,
      '/exports/:id': exportacion,
    };
    paths = apiRoutes({ standard: 1000, withDateFilters: 2000 })
      // A download's bytes are not JSON: a file is resumed with Range, not revalidated with an ETag.
      .filter((route) => route.method === 'get' && route.response?.kind !== 'file')
      .map((route) => {
        if (!route.path.includes(':')) return `${API_BASE}${route.path}`;
        if (ids[route.path] === undefined) throw new Error(`no id for ${route.path}: add one so every GET is covered`);
        return `${API_BASE}${route.path.replace(':id', String(ids[route.path]))}`;
      });
  });
  afterAll(async () => {
    await redis.quit();
    await stack.stop();
  });

  it('answers every GET compressed with gzip and br when it reaches 1 KB, decoding to the same JSON as uncompressed', async () => {
    const compressed: string[] = [];
    for (const path of paths) {
      const plain = await get(stack.baseUrl, path, { 'Accept-Encoding': 'identity' });
      expect({ path, status: plain.status }).toEqual({ path, status: 200 });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
      for (const encoding of ['gzip', 'br']) {
        const answer = await get(stack.baseUrl, path, { 'Accept-Encoding': encoding });
        expect(answer.status).toBe(200);
        expect(answer.headers.vary).toMatch(/Accept-Encoding/i);
        expect(answer.headers['content-encoding']).toBe(plain.wire.length >= 1024 ? encoding : undefined);
        if (path.endsWith('/system/rate-limit')) {
          // The quota's page shows the count, one more on each read.
          expect(decoded(answer)).toEqual(withCount(decoded(plain), answer));
        } else {
          expect(decoded(answer)).toEqual(decoded(plain));
          expect(answer.headers.etag).toBe(plain.headers.etag);
        }
        if (answer.headers['content-encoding']) expect(answer.wire.length).toBeLessThan(plain.wire.length);
      }
      if (plain.wire.length >= 1024) compressed.push(path);
    }
    // The lists of the demo company are well over 1 KB; the quota's own page is well under.
    expect(compressed).toEqual(expect.arrayContaining([`${API_BASE}/sales`, `${API_BASE}/inventory`, `${API_BASE}/returns`]));
    expect(compressed).not.toContain(`${API_BASE}/system/rate-limit`);
  });

  it('answers 304 without a body, with the ETag and the quota headers, to If-None-Match on every GET, and counts no 304', async () => {
    const key = await counterKey();
    for (const path of paths) {
      const first = await get(stack.baseUrl, path, {});
      expect(first.status).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      const used = await redis.get(key);
      const notModified = await get(stack.baseUrl, path, { 'If-None-Match': etag, 'Accept-Encoding': 'gzip' });
      expect({ path, status: notModified.status }).toEqual({ path, status: 304 });
      expect(notModified.wire.length).toBe(0);
      expect(notModified.headers.etag).toBe(etag);
      expect(notModified.headers.vary).toMatch(/Accept-Encoding/i);
      expect(notModified.headers['x-ratelimit-limit']).toBe('1000');
      expect(notModified.headers['x-ratelimit-remaining']).toBe(first.headers['x-ratelimit-remaining']);
      expect(notModified.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2026, 10, 21, 15) / 1000));
      // A list of validators matches when one of them does (RFC 9110).
      expect((await get(stack.baseUrl, path, { 'If-None-Match': `"other", ${etag}` })).status).toBe(304);
      // fetch sends `Cache-Control: no-cache` with every If-None-Match: the 304 holds all the same.
      const fetched = await stack.api(path, { key: KEY, headers: { 'If-None-Match': etag } });
      expect(fetched.status).toBe(304);
      expect(await redis.get(key)).toBe(used);
      const stale = await get(stack.baseUrl, path, { 'If-None-Match': '"not-this-one"' });
      expect(stale.status).toBe(200);
      expect(Number(stale.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
    }
  });

  it('answers 200 with a new ETag once the data changed, and counts it', async () => {
    const path = `${API_BASE}/sales?per_page=200`;
    const before = await get(stack.baseUrl, path, {});
    const created = await stack.api(`${API_BASE}/sales`, {
      key: KEY,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        referencia_externa: 'etag-1',
        fecha: '2026-11-20',
        estado: 'Completada',
        sucursal: 'Sucursal Centro',
        id_bodega: (await stack.query<{ id: number }>("select id from inventory.bodegas where nombre = 'Bodega Principal' limit 1"))[0]!.id,
        id_documento: (
          await stack.query<{ id: number }>("select id from sales.documentos where nombre = 'Factura' and prefijo = 'FAC-'")
        )[0]!.id,
        id_canal: (await stack.query<{ id: number }>("select id from sales.canales where nombre = 'Tienda'"))[0]!.id,
        detalles: [{ codigo_producto: 'MOU-01', cantidad: 1 }],
      }),
    });
    expect(created.status).toBe(201);
    const after = await get(stack.baseUrl, path, { 'If-None-Match': before.headers.etag as string });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(Number(before.headers['x-ratelimit-remaining']) - 2);
  });

  it('answers a page of sales 304 from its version alone, without the page being built, until a sale of the page or the total changes', async () => {
    const path = `${API_BASE}/sales?per_page=2&order_by=fecha&order_direction=desc`;
    /** Pages of sales the sales service has built so far (each 200, never a 304 of a page still current). */
    const pagesBuilt = async () => {
      const metrics = await (await fetch(`http://127.0.0.1:${stack.running.get('sales')!.opsPort}/metrics`)).text();
      const line = metrics
        .split('\n')
        .find((l) => /^erp_bus_handler_duration_seconds_count\{[^}]*subject="[^"]*sales\.sale\.list"[^}]*code="OK"/.test(l));
      return Number(line?.split(' ').at(-1) ?? 0);
    };
    const first = await get(stack.baseUrl, path, {});
    expect(first.status).toBe(200);
    const etag = first.headers.etag as string;
    const page = (decoded(first) as { data: Array<{ id: number; fecha: string }> }).data;
    expect(page).toHaveLength(2);
    // Read again, the same page has the same ETag: it is the page's, not the moment's.
    expect((await get(stack.baseUrl, path, {})).headers.etag).toBe(etag);
    // Another page, filter or order is another ETag.
    expect((await get(stack.baseUrl, `${API_BASE}/sales?per_page=2&page=2`, {})).headers.etag).not.toBe(etag);
    expect((await get(stack.baseUrl, `${API_BASE}/sales?per_page=2&order_direction=asc`, {})).headers.etag).not.toBe(etag);

    const built = await pagesBuilt();
    for (let i = 0; i < 5; i++) expect((await get(stack.baseUrl, path, { 'If-None-Match': etag })).status).toBe(304);
    expect(await pagesBuilt()).toBe(built);

    // A sale of the page changes (annulled in the back office: the total stays): 200, a new ETag.
    const empresaId = (await stack.query<{ id: number }>('select empresa_id as id from sales.ventas where id = $1', [page[0]!.id]))[0]!.id;
    await stack.admin.request(
      salesAdminSubjects,
      'sales.admin.annul',
      { empresa_id: empresaId, id_venta: page[0]!.id },
      { requestId: 'etag' },
    );
    const annulled = await get(stack.baseUrl, path, { 'If-None-Match': etag });
    expect(annulled.status).toBe(200);
    expect((decoded(annulled) as { data: Array<{ id: number; estado: string }> }).data[0]).toMatchObject({
      id: page[0]!.id,
      estado: 'Anulada',
    });
    const afterAnnul = annulled.headers.etag as string;
    expect(afterAnnul).not.toBe(etag);
    expect((await get(stack.baseUrl, path, { 'If-None-Match': afterAnnul })).status).toBe(304);

    // A sale off the page changes only the total the page shows: 200 again.
    const older = await stack.api(`${API_BASE}/sales`, {
      key: KEY,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        referencia_externa: 'etag-older',
        fecha: '2020-01-02',
        estado: 'Cotizacion',
        sucursal: 'Sucursal Centro',
        id_bodega: (await stack.query<{ id: number }>("select id from inventory.bodegas where nombre = 'Bodega Principal' limit 1"))[0]!.id,
        id_documento: (
          await stack.query<{ id: number }>("select id from sales.documentos where nombre = 'Factura' and prefijo = 'FAC-'")
        )[0]!.id,
        detalles: [{ codigo_producto: 'MOU-01', cantidad: 1 }],
      }),
    });
    expect(older.status).toBe(201);
    const moved = await get(stack.baseUrl, path, { 'If-None-Match': afterAnnul });
    expect(moved.status).toBe(200);
    expect((decoded(moved) as { data: Array<{ id: number }> }).data.map((v) => v.id)).toEqual(page.map((v) => v.id));
    expect(moved.headers.etag).not.toBe(afterAnnul);
  });

  it('under concurrency lets no more through than the quota allows, while 304s answered at once cost nothing', async () => {
    const path = `${API_BASE}/inventory`;
    const etag = (await get(stack.baseUrl, path, {})).headers.etag as string;
    const key = await counterKey();
    await redis.set(key, '990');
    const [stale, matching] = await Promise.all([
      Promise.all(Array.from({ length: 30 }, () => get(stack.baseUrl, path, { 'If-None-Match': '"stale"' }))),
      Promise.all(Array.from({ length: 30 }, () => get(stack.baseUrl, path, { 'If-None-Match': etag }))),
    ]);
    const statuses = (answers: Answer[]) => answers.map((a) => a.status);
    expect(statuses(stale).filter((s) => s === 200)).toHaveLength(10);
    expect(statuses(stale).filter((s) => s === 429)).toHaveLength(20);
    expect(statuses(matching).every((s) => s === 304 || s === 429)).toBe(true);
    expect(await redis.get(key)).toBe('1000');
    // With the quota used up, a conditional GET is refused like any request, and still costs nothing.
    const refused = await get(stack.baseUrl, path, { 'If-None-Match': etag });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe(String(40 * 60));
    expect(await redis.get(key)).toBe('1000');
    await redis.set(key, '0');
  });

  it('counts a conditional GET that is refused for its input, like any other', async () => {
    const key = await counterKey();
    const used = Number((await redis.get(key)) ?? '0');
    const bad = await get(stack.baseUrl, `${API_BASE}/sales?per_page=abc`, { 'If-None-Match': '"x"' });
    expect(bad.status).toBe(400);
    const missing = await get(stack.baseUrl, `${API_BASE}/sales/999999`, { 'If-None-Match': '"x"' });
    expect(missing.status).toBe(404);
    expect(Number(await redis.get(key))).toBe(used + 2);
  });
});
