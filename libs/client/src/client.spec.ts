import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ApiError, PartnerApiClient } from './client';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** An answer of the fake API: `body` as JSON, or `raw` bytes as they are. */
type Reply = { status: number; headers?: Record<string, string>; body?: unknown; raw?: Buffer };

/** A local HTTP server that answers from a queue of replies and records every request. */
class FakeApi {
  readonly seen: Seen[] = [];
  private replies: Array<Reply | ((req: Seen) => Reply)> = [];
  private server!: Server;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        this.seen.push(seen);
        const next = this.replies.shift() ?? { status: 500, body: { success: false, error: 'sin respuesta preparada', code: 500 } };
        const reply = typeof next === 'function' ? next(seen) : next;
        res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
        res.end(reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body)));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/external/v1`;
  }

  answer(...replies: Array<Reply | ((req: Seen) => Reply)>): void {
    this.replies.push(...replies);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const meta = { empresa: 'Empresa A', timestamp: '2026-01-01T00:00:00.000Z', filters_applied: {} };
const page = (items: number[], current: number, totalPages: number) => ({
  success: true,
  data: items.map((id) => ({ id })),
  pagination: {
    current_page: current,
    per_page: 2,
    total: 5,
    total_pages: totalPages,
    has_next: current < totalPages,
    has_prev: current > 1,
    from: 1,
    to: 2,
  },
  meta,
});
const error = (code: number, message: string, reason = 'cuerpo_invalido') => ({ success: false, error: message, code, reason });

describe('PartnerApiClient', () => {
  const api = new FakeApi();
  const waits: number[] = [];
  let sut: PartnerApiClient;

  beforeAll(() => api.start());
  afterAll(() => api.stop());
  beforeEach(() => {
    api.seen.length = 0;
    waits.length = 0;
    sut = new PartnerApiClient({
      baseUrl: `${api.baseUrl}/`,
      apiKey: 'key_123',
      sleep: async (ms) => void waits.push(ms),
    });
  });

  it('sends the key, fills path parameters and query strings, and returns the typed body', async () => {
    api.answer({ status: 200, body: { success: true, data: { id: 7, nombre: 'Laptop' }, meta } });

    const res = await sut.get('/inventory/{id}', { path: { id: 7 } });

    expect(res.status).toBe(200);
    expect(res.body.data.nombre).toBe('Laptop');
    expect(api.seen[0]).toEqual(expect.objectContaining({ method: 'GET', url: '/api/external/v1/inventory/7' }));
    expect(api.seen[0]!.headers.authorization).toBe('Bearer key_123');

    api.answer({ status: 200, body: page([], 1, 0) });
    await sut.get('/sales', { query: { estado: 'Completada', fecha_inicio: '2026-01-01', page: undefined } });
    expect(api.seen[1]!.url).toBe('/api/external/v1/sales?estado=Completada&fecha_inicio=2026-01-01');
  });

  it('posts JSON bodies and returns 201 and 200 answers alike', async () => {
    api.answer({ status: 201, body: { success: true, data: { id: 1 }, meta: { ...meta, idempotent: false } } });

    const res = await sut.post('/sales', {
      body: {
        fecha: '2026-01-01',
        estado: 'Completada',
        id_sucursal: 1,
        id_bodega: 1,
        id_documento: 1,
        id_canal: 1,
        detalles: [{ id_producto: 1, cantidad: 2 }],
      },
    });

    expect(res.status).toBe(201);
    expect(res.body.meta.idempotent).toBe(false);
    expect(api.seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(api.seen[0]!.body)).toEqual(
      expect.objectContaining({ estado: 'Completada', detalles: [{ id_producto: 1, cantidad: 2 }] }),
    );
  });

  it('throws an ApiError with the error envelope and its details', async () => {
    api.answer({ status: 422, body: { ...error(422, 'Datos inválidos'), details: { 'detalles.0.cantidad': ['Es obligatorio'] } } });

    const failure = await sut.post('/sales', { body: {} as never }).catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toEqual(expect.objectContaining({ status: 422, message: 'Datos inválidos' }));
    expect((failure as ApiError).details).toEqual({ 'detalles.0.cantidad': ['Es obligatorio'] });
    expect((failure as ApiError).reason).toBe('cuerpo_invalido');
    expect(api.seen).toHaveLength(1);
  });

  it('waits Retry-After after a 429 and then succeeds', async () => {
    api.answer(
      { status: 429, headers: { 'Retry-After': '2' }, body: error(429, 'Rate limit excedido') },
      { status: 200, body: { success: true, data: {}, meta } },
    );

    const res = await sut.get('/system/rate-limit');

    expect(res.status).toBe(200);
    expect(waits).toEqual([2000]);
    expect(api.seen).toHaveLength(2);
  });

  it('retries a 503 with growing waits, a bounded number of times, then gives up with the last answer', async () => {
    api.answer(...[1, 2, 3].map(() => ({ status: 503, body: error(503, 'Servicio no disponible') })));

    const failure = await sut.get('/inventory/summary').catch((err: unknown) => err);

    expect(failure).toEqual(expect.objectContaining({ status: 503 }));
    expect(api.seen).toHaveLength(3);
    expect(waits).toEqual([500, 1000]);
  });

  it('follows Retry-After on a 503 too', async () => {
    api.answer(
      { status: 503, headers: { 'Retry-After': '5' }, body: error(503, 'Servicio no disponible') },
      { status: 200, body: { success: true, data: {}, meta } },
    );

    await sut.get('/inventory/summary');

    expect(waits).toEqual([5000]);
  });

  it('does not wait longer than allowed: a 429 until the next hour is returned at once', async () => {
    api.answer({ status: 429, headers: { 'Retry-After': '1800' }, body: error(429, 'Rate limit excedido') });

    const failure = await sut.get('/system/rate-limit').catch((err: unknown) => err);

    expect(failure).toEqual(expect.objectContaining({ status: 429 }));
    expect((failure as ApiError).headers.get('retry-after')).toBe('1800');
    expect(waits).toEqual([]);
  });

  it('downloads an export file of several gzip members as one text, line by line', async () => {
    // The service compresses each batch apart: the file is their members one after another.
    const members = [[1, 2], [3], [4, 5, 6]].map((ids) => gzipSync(`${ids.map((id) => JSON.stringify({ id })).join('\n')}\n`));
    api.answer({ status: 200, headers: { 'Content-Type': 'application/gzip' }, raw: Buffer.concat(members) });
    const objects: unknown[] = [];
    for await (const object of sut.exports.download(9)) objects.push(object);
    expect(objects).toEqual([1, 2, 3, 4, 5, 6].map((id) => ({ id })));
    expect(api.seen.at(-1)!.url).toBe('/api/external/v1/exports/9/download');
  });

  it('does not retry other errors', async () => {
    api.answer({ status: 504, body: error(504, 'Tiempo de espera agotado') });

    await expect(sut.get('/inventory/summary')).rejects.toEqual(expect.objectContaining({ status: 504 }));
    expect(api.seen).toHaveLength(1);
  });

  it('iterates every item of a list page after page, keeping the filters', async () => {
    api.answer(
      (req) => ({ status: 200, body: page([1, 2], Number(new URL(req.url, 'http://x').searchParams.get('page')), 3) }),
      (req) => ({ status: 200, body: page([3, 4], Number(new URL(req.url, 'http://x').searchParams.get('page')), 3) }),
      (req) => ({ status: 200, body: page([5], Number(new URL(req.url, 'http://x').searchParams.get('page')), 3) }),
    );

    const ids: number[] = [];
    for await (const product of sut.paginate('/inventory', { query: { per_page: 2, tipo: 'Producto' } })) ids.push(product.id);

    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(api.seen.map((s) => s.url)).toEqual([
      '/api/external/v1/inventory?per_page=2&tipo=Producto&page=1',
      '/api/external/v1/inventory?per_page=2&tipo=Producto&page=2',
      '/api/external/v1/inventory?per_page=2&tipo=Producto&page=3',
    ]);
  });

  it('follows next_cursor in cursor mode, never sending a page', async () => {
    const byChange = (ids: number[], next: string | null) => ({
      success: true,
      data: ids.map((id) => ({ id })),
      pagination: { per_page: 2, next_cursor: next, resume_cursor: next ?? 'fin', has_more: next !== null },
      meta: { empresa: 'E', timestamp: '2026-01-01T00:00:00.000Z', filters_applied: {} },
    });
    api.answer({ status: 200, body: byChange([1, 2], 'c1') }, { status: 200, body: byChange([3], null) });

    const ids: number[] = [];
    for await (const sale of sut.paginate('/sales', { query: { order_by: 'updated_at', per_page: 2 } })) ids.push(sale.id);

    expect(ids).toEqual([1, 2, 3]);
    expect(api.seen.map((s) => s.url)).toEqual([
      '/api/external/v1/sales?order_by=updated_at&per_page=2',
      '/api/external/v1/sales?order_by=updated_at&per_page=2&cursor=c1',
    ]);
  });

  it('stops after the first page of an empty list', async () => {
    api.answer({ status: 200, body: page([], 1, 0) });

    const items = [];
    for await (const sale of sut.paginate('/sales')) items.push(sale);

    expect(items).toEqual([]);
    expect(api.seen).toHaveLength(1);
  });
});
