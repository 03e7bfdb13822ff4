import { randomUUID } from 'node:crypto';
import { connect, errors as natsErrors, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import {
  AppError,
  ERROR_CODES,
  detailsFromZod,
  isAppError,
  isReason,
  type Catalog,
  type ErrorCode,
  type ErrorDetails,
  type ParsedRequestOf,
  type Reason,
  type ReplyInputOf,
  type ReplyOf,
  type RequestContext,
  type RequestOf,
  type TenantContext,
} from '@erp/contracts';
import { translatePgError } from '@erp/db';
import { ERROR_HEADER, JSON_RANGE_HEADER, buildHeaders, extractTraceContext, readRequestContext } from './headers';
import type { Logger } from './logger';

const tracer = trace.getTracer('@erp/bus');

/** Context type a handler receives: tenant subjects are sure to have a company. */
export type HandlerContext<Spec> = Spec extends { tenant: true } ? TenantContext : RequestContext;

/**
 * JSON text a handler answers as it is: built where the data lives (Postgres) in the exact form
 * the subject's contract gives, so neither the service nor the gateway parses and serialises it
 * again. The bus embeds it in the reply verbatim; with `validateReplies` it first checks that the
 * contract accepts it and would send the very same text.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A page reply whose `items` are JSON text. */
export type JsonPageOf<T> = T extends { items: unknown } ? Omit<T, 'items'> & { items: JsonText } : never;

/** A reply given as JSON text: the whole reply, or the `items` of a page. */
export type JsonReplyOf<T> = JsonText | JsonPageOf<T>;

/** One handler per subject of the catalog: the mapped type makes a missing subject a compile error. */
export type Handlers<C extends Catalog> = {
  [S in keyof C]: (
    request: ParsedRequestOf<C, S>,
    ctx: HandlerContext<C[S]>,
  ) => Promise<C[S] extends { json: true } ? ReplyInputOf<C, S> | JsonReplyOf<ReplyInputOf<C, S>> : ReplyInputOf<C, S>>;
};

/** An error between services: its code, its reason for programs, its message for people, its details per field. */
export type WireError = { code: ErrorCode; reason?: Reason; message: string; details?: ErrorDetails };
type WireFailure = { ok: false; error: WireError };
type WireReply = { ok: true; data: unknown } | WireFailure;

export interface BusObserver {
  /** A request this process sent got its answer (or failed): `code` is 'OK' or an error code. */
  requested?(subject: string, code: string, seconds: number): void;
  /** A request this process handled. */
  handled?(subject: string, code: string, seconds: number): void;
  /** A JetStream message a durable consumer of this process settled (`deliveryCount` > 1 is a redelivery). */
  consumed?(consumer: string, subject: string, outcome: 'ack' | 'nak' | 'term', deliveryCount: number): void;
}

export interface BusOptions {
  /** One NATS URL, or several separated by commas (the servers of a cluster: the client moves to another when one goes). */
  servers: string;
  /** Every subject is published under `<prefix>.`: environments and test runs share one server safely. */
  prefix: string;
  /** Connection name, shown in NATS monitoring. */
  name: string;
  /**
   * The bus identity (a service's name, or `admin`) and its password, when the server requires
   * them. Replies then come to `_INBOX_<user>.…`, the one inbox the identity may read, so no
   * identity can read another's replies.
   */
  credentials?: { user: string; password: string };
  /**
   * TLS to the server, verified against the CA in `caFile`; with `certFile` and `keyFile` the
   * client also presents its certificate (a server that verifies clients).
   */
  tls?: { caFile: string; certFile?: string; keyFile?: string };
  logger: Logger;
  requestTimeoutMs?: number;
  observer?: BusObserver;
  /** Limits of the events stream, applied when it is created and reconciled at every start. */
  stream?: StreamSettings;
  /** Copies and limits of the export files' object store, applied by the operator's step like the stream's. */
  exportStore?: ExportStoreSettings;
  /**
   * Check replies given as JSON text against their contract before they leave (default true). A
   * reply given as values is always parsed with its contract, which turns it into its wire form.
   */
  validateReplies?: boolean;
}

/** The export files' object store as the operator makes it (`ensureExportStore`). */
export interface ExportStoreSettings {
  /** Copies of each file on distinct JetStream servers, as for the events stream. */
  replicas: number;
  /**
   * Bytes all files may take together (-1: no limit), shared evenly among the writers' stores; a
   * store that is full fails its writer's new export instead of evicting another.
   */
  maxBytes: number;
  /**
   * Files older than this are removed by JetStream whatever the job records say: the backstop for a
   * file written by an attempt whose worker died after its job moved on.
   */
  maxAgeMs: number;
}

export interface StreamSettings {
  /** Copies of each event on distinct servers (1 or 3, or 5): 3 survives losing one server and its disk. */
  replicas: number;
  /** Bytes the stream may hold (-1: no limit). When full it refuses new events: they wait in the outboxes. */
  maxBytes: number;
  /** Events older than this are removed, consumed or not. */
  maxAgeMs: number;
  /**
   * JetStream drops an event whose id it saw within this window. The outbox relay re-publishes a
   * row whose mark did not commit on its next pass (500 ms) or, after a crash or a Postgres
   * outage, as soon as a relay runs again: the window must outlast that gap. Past it consumers
   * still apply an event once (processed_events), so the window only saves them the work.
   */
  duplicateWindowMs: number;
}

export interface RequestOptions {
  timeoutMs?: number;
}

/**
 * Typed request/reply over NATS. Requests carry the request context and W3C trace context in
 * headers; replies carry either data or a typed error code. Handlers subscribe in a queue group
 * so replicas of a service share the load.
 */
export class Bus {
  private readonly subs: Subscription[] = [];
  private received = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly stopHooks: Array<() => Promise<void>> = [];
  private draining = false;

  private constructor(
    readonly nc: NatsConnection,
    readonly options: Required<Pick<BusOptions, 'prefix' | 'requestTimeoutMs' | 'validateReplies'>> & BusOptions,
  ) {}

  static async connect(options: BusOptions): Promise<Bus> {
    const nc = await connect({
      servers: options.servers.split(',').map((s) => s.trim()),
      name: options.name,
      ...(options.credentials
        ? { user: options.credentials.user, pass: options.credentials.password, inboxPrefix: inboxPrefix(options.credentials.user) }
        : {}),
      ...(options.tls ? { tls: { ...options.tls } } : {}),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // No Error (and stack capture) per request for context on a timeout: the bus reports
      // timeouts and missing responders with the subject itself.
      noAsyncTraces: true,
    });
    return new Bus(nc, { requestTimeoutMs: 10_000, validateReplies: true, ...options });
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /** Full subject name under this bus's prefix. */
  subject(name: string): string {
    return `${this.options.prefix}.${name}`;
  }

  /** Whether the connection is usable (for readiness). */
  isConnected(): boolean {
    return !this.nc.isClosed() && !this.draining && this.nc.status !== undefined;
  }

  async request<C extends Catalog, S extends keyof C & string>(
    catalog: C,
    subject: S,
    payload: RequestOf<C, S>,
    ctx: RequestContext,
    options: RequestOptions = {},
  ): Promise<ReplyOf<C, S>> {
    void catalog; // the catalog fixes the types; the service validates the payload
    return this.exchange(subject, payload, ctx, options, (msg) => unwrap(msg.json<WireReply>()) as ReplyOf<C, S>);
  }

  /**
   * A request whose reply is wanted as JSON text, to be written out as it is (the gateway's
   * responses): the reply's bytes as the handler's `JsonText` gave them, never parsed here. A
   * handler that answered with values (an older release) gets the same bytes by serialising them.
   */
  async requestJson<C extends Catalog, S extends keyof C & string>(
    catalog: C,
    subject: S,
    payload: RequestOf<C, S>,
    ctx: RequestContext,
    options: RequestOptions = {},
  ): Promise<Buffer> {
    void catalog;
    return this.exchange(subject, payload, ctx, options, (msg) => {
      const range = jsonRange(msg);
      return range ? range.json : Buffer.from(JSON.stringify(unwrap(msg.json<WireReply>())));
    });
  }

  /** `requestJson` for a page: its `items` as JSON text, the rest (pagination, filters) as values. */
  async requestJsonPage<C extends Catalog, S extends keyof C & string>(
    catalog: C,
    subject: S,
    payload: RequestOf<C, S>,
    ctx: RequestContext,
    options: RequestOptions = {},
  ): Promise<{ page: Omit<ReplyOf<C, S>, 'items'>; items: Buffer }> {
    void catalog;
    return this.exchange(subject, payload, ctx, options, (msg) => {
      const range = jsonRange(msg);
      const { items, ...page } = unwrap(range ? (JSON.parse(range.rest) as WireReply) : msg.json<WireReply>()) as { items: unknown };
      return { page: page as Omit<ReplyOf<C, S>, 'items'>, items: range ? range.json : Buffer.from(JSON.stringify(items)) };
    });
  }

  private async exchange<T>(
    subject: string,
    payload: unknown,
    ctx: RequestContext,
    options: RequestOptions,
    read: (msg: Msg) => T,
  ): Promise<T> {
    const started = performance.now();
    const span = tracer.startSpan(`${subject} request`, {
      kind: SpanKind.CLIENT,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
    });
    let code = 'OK';
    try {
      const headers = buildHeaders(ctx, trace.setSpan(otelContext.active(), span));
      let msg: Msg;
      try {
        msg = await this.nc.request(this.subject(subject), JSON.stringify(payload), {
          timeout: options.timeoutMs ?? this.options.requestTimeoutMs,
          headers,
        });
      } catch (err) {
        throw transportError(subject, err);
      }
      return read(msg);
    } catch (err) {
      code = isAppError(err) ? err.code : 'INTERNAL';
      span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      throw err;
    } finally {
      span.end();
      this.options.observer?.requested?.(subject, code, (performance.now() - started) / 1000);
    }
  }

  /**
   * Serves every subject of a catalog in one queue group. Payloads are parsed with the contract
   * before the handler sees them; replies are parsed with the contract before they leave.
   */
  serve<C extends Catalog>(catalog: C, handlers: Handlers<C>, options: { queue: string }): void {
    for (const name of Object.keys(catalog) as Array<keyof C & string>) {
      const spec = catalog[name]!;
      const handler = handlers[name] as (req: unknown, ctx: RequestContext) => Promise<unknown>;
      const sub = this.nc.subscribe(this.subject(name), {
        queue: options.queue,
        callback: (err, msg) => {
          if (err) {
            this.logger.error({ err, subject: name }, 'subscription failed');
            return;
          }
          void this.track(this.handle(name, spec, handler, msg));
        },
      });
      this.subs.push(sub);
    }
  }

  /** Plain (non-queue) subscription: every replica receives every message. For cache invalidation. */
  subscribeAll(pattern: string, onMessage: (subject: string, payload: unknown) => void): void {
    const prefixLength = this.options.prefix.length + 1;
    const sub = this.nc.subscribe(this.subject(pattern), {
      callback: (err, msg) => {
        if (err) return;
        try {
          onMessage(msg.subject.slice(prefixLength), msg.json());
        } catch (cause) {
          this.logger.warn({ err: cause, subject: msg.subject }, 'broadcast message ignored');
        }
      },
    });
    this.subs.push(sub);
  }

  /** Requests this process has begun to handle since it connected: background work compares two readings to know whether it has company. */
  get requestsReceived(): number {
    return this.received;
  }

  /** Registers work to await when draining (consumers, relays). */
  onDrain(hook: () => Promise<void>): void {
    this.stopHooks.push(hook);
  }

  /** Counts a unit of work so `drain()` waits for it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work)).catch(() => undefined);
    return work;
  }

  /**
   * Stops taking new work, waits for what is in flight (handlers, consumers), then closes the
   * connection after flushing the replies.
   */
  async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    await Promise.allSettled(this.subs.map((s) => s.drain()));
    await Promise.allSettled(this.stopHooks.map((hook) => hook()));
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }

  private async handle(
    name: string,
    spec: Catalog[string],
    handler: (req: unknown, ctx: RequestContext) => Promise<unknown>,
    msg: Msg,
  ): Promise<void> {
    const started = performance.now();
    this.received++;
    const ctx = readRequestContext(msg.headers) ?? { requestId: randomUUID() };
    // Made when something is logged: pino serialises a child's bindings as it creates it.
    let logger: Logger | undefined;
    const log = (): Logger => (logger ??= this.logger.child({ requestId: ctx.requestId, subject: name, empresaId: ctx.empresa?.id }));
    const span = tracer.startSpan(
      `${name} process`,
      { kind: SpanKind.SERVER, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': name } },
      extractTraceContext(msg.headers),
    );
    let sent: EncodedReply | undefined;
    let failure: WireFailure | undefined;
    try {
      sent = await otelContext.with(trace.setSpan(otelContext.active(), span), async () => {
        let raw: unknown;
        try {
          raw = msg.data.length > 0 ? msg.json() : {};
        } catch {
          throw new AppError('BAD_REQUEST', 'El mensaje no es JSON válido');
        }
        const parsed = spec.request.safeParse(raw);
        if (!parsed.success) throw AppError.validation('Datos inválidos', detailsFromZod(parsed.error));
        if (spec.tenant && !ctx.empresa) throw new AppError('UNAUTHORIZED', 'La solicitud no identifica a la empresa');
        const result = await handler(parsed.data, ctx);
        const encoded = encodeJsonReply(result);
        if (encoded) {
          if (this.options.validateReplies) checkJsonReply(name, spec, encoded, log());
          return encoded;
        }
        const checked = spec.reply.safeParse(result);
        if (!checked.success) {
          log().error({ issues: checked.error.issues.slice(0, 5) }, 'handler reply breaks its contract');
          throw new Error(`Reply of ${name} does not match its contract`);
        }
        return { body: JSON.stringify({ ok: true, data: checked.data }) };
      });
    } catch (thrown) {
      failure = { ok: false, error: wireErrorOf(thrown, log) };
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.error.code });
    } finally {
      span.end();
    }
    const code = failure ? failure.error.code : 'OK';
    if (msg.reply) {
      if (failure) {
        const headers = buildHeaders(undefined);
        headers.set(ERROR_HEADER, code);
        msg.respond(JSON.stringify(failure), { headers });
      } else if (sent!.json) {
        const headers = buildHeaders(undefined);
        headers.set(JSON_RANGE_HEADER, sent!.json.range.join('-'));
        msg.respond(sent!.body, { headers });
      } else {
        msg.respond(sent!.body);
      }
    }
    this.options.observer?.handled?.(name, code, (performance.now() - started) / 1000);
  }
}

interface EncodedReply {
  body: string | Buffer;
  /** The handler's JSON text, where it sits in the reply and its byte range in `body`. */
  json?: { text: string; at: 'reply' | 'items'; range: [number, number] };
}

/** The wire reply around a handler's JSON text, or undefined when the handler answered with values. */
function encodeJsonReply(result: unknown): EncodedReply | undefined {
  if (result instanceof JsonText) return embed('{"ok":true,"data":', result, '}', 'reply');
  if (result === null || typeof result !== 'object' || !((result as { items?: unknown }).items instanceof JsonText)) return undefined;
  const { items, ...page } = result as { items: JsonText };
  const members = JSON.stringify(page).slice(1, -1);
  return embed(`{"ok":true,"data":{${members}${members ? ',' : ''}"items":`, items, '}}', 'items');
}

/** The reply's bytes, the text encoded once straight into them (no joined string, no copy). */
function embed(prefix: string, { text }: JsonText, suffix: string, at: 'reply' | 'items'): EncodedReply {
  const start = Buffer.byteLength(prefix);
  const end = start + Buffer.byteLength(text);
  const body = Buffer.allocUnsafe(end + Buffer.byteLength(suffix));
  body.write(prefix, 0);
  body.write(text, start);
  body.write(suffix, end);
  return { body, json: { text, at, range: [start, end] } };
}

/**
 * A JSON reply must be what the contract accepts and exactly the text the contract's output would
 * serialise to (same fields in the same order, numbers and timestamps written the same way): a
 * partner cannot tell which path answered.
 */
function checkJsonReply(name: string, spec: Catalog[string], { body, json }: EncodedReply, log: Logger): void {
  const checked = spec.reply.safeParse((JSON.parse(body.toString()) as { data: unknown }).data);
  if (!checked.success) {
    log.error({ issues: checked.error.issues.slice(0, 5) }, 'handler reply breaks its contract');
    throw new Error(`Reply of ${name} does not match its contract`);
  }
  const expected = JSON.stringify(json!.at === 'items' ? (checked.data as { items: unknown }).items : checked.data);
  if (expected !== json!.text) {
    log.error(
      { expected: expected.slice(0, 2000), sent: json!.text.slice(0, 2000) },
      'handler JSON reply differs from the output of its contract',
    );
    throw new Error(`Reply of ${name} does not match its contract`);
  }
}

/** An error as a reply carries it; what it cannot say is logged (with an id the reply names) and answered as INTERNAL. */
export function wireErrorOf(thrown: unknown, log: () => Logger): WireError {
  const err = translatePgError(thrown);
  if (isAppError(err) && (ERROR_CODES as readonly string[]).includes(err.code)) {
    if (err.code === 'INTERNAL' || err.code === 'UNAVAILABLE') log().error({ err: thrown }, err.message);
    return { code: err.code, reason: err.reason, message: err.message, ...(err.details ? { details: err.details } : {}) };
  }
  const errorId = randomUUID();
  log().error({ err: thrown, errorId }, 'unhandled error');
  return { code: 'INTERNAL', message: `Error interno del servidor (ref. ${errorId})` };
}

/** The error a reply carried, as the caller throws it. */
export function appErrorOf(error: WireError): AppError {
  // A reply without a reason (a service of an older version during a rolling update) gets its code's.
  const reason = isReason(error.reason) ? error.reason : undefined;
  return new AppError(error.code, error.message, error.details, reason ? { reason } : undefined);
}

function unwrap(reply: WireReply): unknown {
  if (reply.ok) return reply.data;
  throw appErrorOf(reply.error);
}

/** The JSON text a reply carries as sent (its bytes, not copied) and the rest of the reply with `null` in its place. */
function jsonRange(msg: Msg): { json: Buffer; rest: string } | undefined {
  const header = msg.headers?.get(JSON_RANGE_HEADER);
  if (!header || msg.headers?.has(ERROR_HEADER)) return undefined;
  const [start, end] = header.split('-').map(Number) as [number, number];
  const body = Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength);
  return { json: body.subarray(start, end), rest: `${body.toString('utf8', 0, start)}null${body.toString('utf8', end)}` };
}

/** The inbox of an identity: its replies, and the only `_INBOX` subjects its permissions let it read. */
export function inboxPrefix(identity: string): string {
  return `_INBOX_${identity}`;
}

function transportError(subject: string, err: unknown): AppError {
  // The encoded request is larger than the server's max_payload: the sender's data is too big, not the bus down.
  if (err instanceof natsErrors.InvalidArgumentError && err.message.includes('max_payload')) {
    return new AppError('PAYLOAD_TOO_LARGE', 'El cuerpo de la solicitud es demasiado grande para procesarlo', undefined, { cause: err });
  }
  if (err instanceof natsErrors.RequestError && err.isNoResponders()) {
    return new AppError('UNAVAILABLE', `Servicio no disponible (${subject.split('.')[0]})`, undefined, { cause: err });
  }
  if (err instanceof natsErrors.NoRespondersError) {
    return new AppError('UNAVAILABLE', `Servicio no disponible (${subject.split('.')[0]})`, undefined, { cause: err });
  }
  if (err instanceof natsErrors.TimeoutError || (err instanceof natsErrors.RequestError && err.cause instanceof natsErrors.TimeoutError)) {
    return new AppError('TIMEOUT', `El servicio no respondió a tiempo (${subject.split('.')[0]})`, undefined, { cause: err });
  }
  return new AppError('UNAVAILABLE', 'Bus de mensajes no disponible', undefined, { cause: err });
}
