import type { components, paths } from './openapi.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Paths of the partner API (the inbound webhooks, called by the platforms, have their own document). */
type ApiPath = keyof paths;

/** Paths with an operation for `M`. */
export type PathsFor<M extends Method> = { [P in ApiPath]: paths[P][M] extends { responses: unknown } ? P : never }[ApiPath];

type Operation<P extends ApiPath, M extends Method> = paths[P][M];
type ParametersOf<O> = O extends { parameters: infer X } ? X : never;
type PathParams<O> = ParametersOf<O> extends { path: infer X } ? X : never;
type QueryParams<O> = ParametersOf<O> extends { query?: infer X } ? X : never;
type BodyOf<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The body of a successful answer (200 or 201). */
export type SuccessBody<O> = O extends { responses: infer R }
  ? { [S in keyof R & (200 | 201)]: JsonOf<R[S]> }[keyof R & (200 | 201)]
  : never;

export type RequestOptions<O> = ([PathParams<O>] extends [never] ? unknown : { path: PathParams<O> }) &
  ([QueryParams<O>] extends [never] ? unknown : { query?: QueryParams<O> }) &
  ([BodyOf<O>] extends [never] ? unknown : { body: BodyOf<O> }) & {
    headers?: Record<string, string>;
    signal?: AbortSignal;
  };

/** Options are optional when the operation needs no path parameter and no body. */
type Args<O> = object extends RequestOptions<O> ? [options?: RequestOptions<O>] : [options: RequestOptions<O>];

/** GET paths that answer a page (`data` array plus `pagination`). */
export type ListPath = {
  [P in PathsFor<'get'>]: SuccessBody<Operation<P, 'get'>> extends { data: unknown[]; pagination: unknown } ? P : never;
}[PathsFor<'get'>];
export type ListItem<P extends ListPath> = SuccessBody<Operation<P, 'get'>> extends { data: Array<infer T> } ? T : never;

export type ErrorBody = components['schemas']['Error'];

type ExportOperation = Operation<'/exports/{id}', 'get'>;
/** An export as `GET /exports/{id}` answers it. */
export type Exportacion = SuccessBody<ExportOperation> extends { data: infer E } ? E : never;
/** Body of `POST /exports`. */
export type ExportRequest = BodyOf<Operation<'/exports', 'post'>>;

/** What `exports.wait` does while the export runs. */
export interface WaitOptions {
  /** Between two reads of the export. Default 1 s. */
  intervalMs?: number;
  /** Gives up (throws) after this long. Default 1 hour. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** A non-2xx answer: the error envelope (`error`, `code`, `reason`, `details`) and the response's status and headers. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
    readonly headers: Headers,
  ) {
    super(body?.error ?? `HTTP ${status}`);
  }

  /** Messages per field of a validation error (`detalles.0.cantidad` → [...]). */
  get details(): Record<string, string[]> {
    return this.body?.details ?? {};
  }

  /** Why it was refused, for programs (`stock_insuficiente`, `clave_invalida`, …); undefined when the body was no envelope. */
  get reason(): ErrorBody['reason'] | undefined {
    return this.body?.reason;
  }
}

export interface ClientOptions {
  /** `{base_url}`: the host followed by `/api/external/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Attempts per call, the first included, while the API answers 429 or 503. Default 3. */
  maxAttempts?: number;
  /** Longest wait accepted before a retry; an answer asking for more is returned as an error at once. Default 60 s. */
  maxRetryDelayMs?: number;
  /** First wait after a 503 without `Retry-After`, doubled on each attempt. Default 500 ms. */
  backoffMs?: number;
  fetch?: typeof fetch;
  /** Waits between attempts (tests replace it). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The partner API over fetch, typed from its OpenAPI document: sends the key, retries 429 after
 * `Retry-After` and 503 a bounded number of times (neither was processed), and follows pages.
 *
 * ```ts
 * const api = new PartnerApiClient({ baseUrl: 'http://localhost:8080/api/external/v1', apiKey });
 * const { body } = await api.get('/inventory/{id}', { path: { id: 1 } });
 * for await (const venta of api.paginate('/sales', { query: { estado: 'Completada' } })) console.log(venta.total);
 * ```
 */
export class PartnerApiClient {
  private readonly baseUrl: string;
  private readonly maxAttempts: number;
  private readonly maxRetryDelayMs: number;
  private readonly backoffMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.backoffMs = options.backoffMs ?? 500;
    this.fetchFn = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /**
   * Bulk exports: `create` queues one, `wait` returns it once it ended, `download` streams its
   * objects one by one, parsed, gunzipped as the bytes arrive (the file is never held in memory;
   * a connection that breaks is resumed with `Range` where it stopped).
   *
   * ```ts
   * const { id } = await api.exports.create({ recurso: 'sales', filtros: {} });
   * const done = await api.exports.wait(id);
   * for await (const venta of api.exports.download(id)) mirror.save(venta);
   * // then delta sync: GET /sales?order_by=updated_at&cursor=<done.cursor>
   * ```
   */
  readonly exports = {
    create: async (body: ExportRequest): Promise<Exportacion> =>
      ((await this.request('POST', '/exports', { body })).body as { data: Exportacion }).data,
    wait: async (id: number, options: WaitOptions = {}): Promise<Exportacion> => {
      const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
      for (;;) {
        const { body } = await this.request<{ data: Exportacion }>('GET', '/exports/{id}', {
          path: { id },
          ...(options.signal ? { signal: options.signal } : {}),
        });
        if (body.data.estado !== 'en_cola' && body.data.estado !== 'procesando') return body.data;
        if (Date.now() > deadline) throw new Error(`La exportación ${id} sigue ${body.data.estado} después del tiempo de espera`);
        await this.sleep(options.intervalMs ?? 1_000);
      }
    },
    download: <T = unknown>(id: number, options: { signal?: AbortSignal } = {}): AsyncGenerator<T> =>
      this.exportObjects<T>(id, options.signal),
  };

  get<P extends PathsFor<'get'>>(path: P, ...[options]: Args<Operation<P, 'get'>>): Promise<ApiResponse<SuccessBody<Operation<P, 'get'>>>> {
    return this.request('GET', path, options as RawOptions | undefined);
  }

  post<P extends PathsFor<'post'>>(
    path: P,
    ...[options]: Args<Operation<P, 'post'>>
  ): Promise<ApiResponse<SuccessBody<Operation<P, 'post'>>>> {
    return this.request('POST', path, options as RawOptions | undefined);
  }

  put<P extends PathsFor<'put'>>(path: P, ...[options]: Args<Operation<P, 'put'>>): Promise<ApiResponse<SuccessBody<Operation<P, 'put'>>>> {
    return this.request('PUT', path, options as RawOptions | undefined);
  }

  patch<P extends PathsFor<'patch'>>(
    path: P,
    ...[options]: Args<Operation<P, 'patch'>>
  ): Promise<ApiResponse<SuccessBody<Operation<P, 'patch'>>>> {
    return this.request('PATCH', path, options as RawOptions | undefined);
  }

  delete<P extends PathsFor<'delete'>>(
    path: P,
    ...[options]: Args<Operation<P, 'delete'>>
  ): Promise<ApiResponse<SuccessBody<Operation<P, 'delete'>>>> {
    return this.request('DELETE', path, options as RawOptions | undefined);
  }

  /**
   * Every item of a list, page after page from `query.page` (1 by default) while `has_next`; in
   * cursor mode (`order_by=updated_at` or `cursor`), from `query.cursor` along `next_cursor`.
   */
  async *paginate<P extends ListPath>(path: P, ...[options]: Args<Operation<P, 'get'>>): AsyncGenerator<ListItem<P>> {
    const raw = (options ?? {}) as RawOptions;
    const byChange = raw.query?.order_by === 'updated_at' || raw.query?.cursor !== undefined;
    let page = Number(raw.query?.page ?? 1);
    let cursor = raw.query?.cursor;
    for (;;) {
      const { body } = await this.request<{ data: ListItem<P>[]; pagination: { has_next?: boolean; next_cursor?: string | null } }>(
        'GET',
        path,
        { ...raw, query: byChange ? { ...raw.query, ...(cursor !== undefined ? { cursor } : {}) } : { ...raw.query, page } },
      );
      yield* body.data;
      if (byChange) {
        if (!body.pagination.next_cursor) return;
        cursor = body.pagination.next_cursor;
      } else {
        if (!body.pagination.has_next) return;
        page += 1;
      }
    }
  }

  /** The objects of an export's file, parsed line by line as the gunzipped text arrives. */
  private async *exportObjects<T>(id: number, signal: AbortSignal | undefined): AsyncGenerator<T> {
    const text = this.exportBytes(id, signal).pipeThrough(new DecompressionStream('gzip')).pipeThrough(new TextDecoderStream());
    const reader = text.getReader();
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const lines = (rest + value).split('\n');
      rest = lines.pop()!;
      for (const line of lines) yield JSON.parse(line) as T;
    }
    if (rest !== '') yield JSON.parse(rest) as T;
  }

  /** The file's bytes; a broken connection is resumed with `Range` from the bytes received (up to `maxAttempts`). */
  private exportBytes(id: number, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
    const url = this.url('/exports/{id}/download', { path: { id } });
    let received = 0;
    let failures = 0;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const open = async () => {
      const headers: Record<string, string> = { Authorization: `Bearer ${this.options.apiKey}` };
      if (received > 0) headers.Range = `bytes=${received}-`;
      const res = await this.fetchFn(url, { headers, ...(signal ? { signal } : {}) });
      if (res.status !== (received > 0 ? 206 : 200) || !res.body) {
        const parsed = await parseBody(res);
        throw new ApiError(res.status, isErrorBody(parsed) ? parsed : undefined, res.headers);
      }
      return res.body.getReader();
    };
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        for (;;) {
          try {
            reader ??= await open();
            const { done, value } = await reader.read();
            if (done) return controller.close();
            received += value.byteLength;
            return controller.enqueue(value);
          } catch (err) {
            if (err instanceof ApiError || signal?.aborted || ++failures >= this.maxAttempts) throw err;
            reader = undefined;
          }
        }
      },
      cancel: (reason) => reader?.cancel(reason),
    });
  }

  private async request<T>(method: string, template: string, options: RawOptions = {}): Promise<ApiResponse<T>> {
    const url = this.url(template, options);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...options.headers,
      Authorization: `Bearer ${this.options.apiKey}`,
    };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    for (let attempt = 1; ; attempt += 1) {
      const res = await this.fetchFn(url, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const parsed = await parseBody(res);
      if (res.ok) return { status: res.status, body: parsed as T, headers: res.headers };
      const wait = this.retryDelay(res, attempt);
      if (wait === undefined) throw new ApiError(res.status, isErrorBody(parsed) ? parsed : undefined, res.headers);
      await this.sleep(wait);
    }
  }

  /** How long to wait before retrying this answer, or undefined when it is final. */
  private retryDelay(res: Response, attempt: number): number | undefined {
    if ((res.status !== 429 && res.status !== 503) || attempt >= this.maxAttempts) return undefined;
    const asked = retryAfterMs(res.headers.get('retry-after'));
    const wait =
      asked ?? (res.status === 429 ? resetDelayMs(res.headers.get('x-ratelimit-reset')) : undefined) ?? this.backoffMs * 2 ** (attempt - 1);
    return wait <= this.maxRetryDelayMs ? wait : undefined;
  }

  private url(template: string, options: RawOptions): string {
    const path = template.replace(/\{([^}]+)\}/g, (_match, name: string) => {
      const value = options.path?.[name];
      if (value === undefined || value === null) throw new TypeError(`Falta el parámetro de ruta "${name}" de ${template}`);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null) query.append(name, String(value));
    }
    const search = query.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }
}

interface RawOptions {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

async function parseBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  if (!/json/i.test(res.headers.get('content-type') ?? '')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && (value as { success?: unknown }).success === false;
}

/** `Retry-After` in seconds or as an HTTP date. */
function retryAfterMs(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function resetDelayMs(value: string | null): number | undefined {
  if (!value || !/^\d+$/.test(value)) return undefined;
  return Math.max(0, Number(value) * 1000 - Date.now());
}
