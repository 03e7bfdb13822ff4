import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
  type JsMsg,
  type PubAck,
  type ConsumerConfig,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import {
  BUS_IDENTITIES,
  STREAM_FAMILIES,
  isAppError,
  streamName,
  streamOfSubject,
  type BusIdentity,
  type StreamFamily,
  type EventCatalog,
  type PayloadOf,
  type RequestContext,
} from '@erp/contracts';
import { translatePgError } from '@erp/db';
import type { Bus, StreamSettings } from './bus';
import { buildHeaders, extractTraceContext, readRequestContext } from './headers';
import { ensureExportStore, updateStream } from './objects';

const tracer = trace.getTracer('@erp/bus');
const nanos = (ms: number) => ms * 1_000_000;

/** Development defaults: one server, no size limit, a week of events, ten minutes of deduplication. */
export const DEFAULT_STREAM_SETTINGS: StreamSettings = {
  replicas: 1,
  maxBytes: -1,
  maxAgeMs: 7 * 24 * 3600_000,
  duplicateWindowMs: 10 * 60_000,
};

/**
 * How long each stream keeps an event: the events stream to its limits (partners replay it), the
 * intake stream until its one consumer settled it (a work queue).
 */
const STREAM_RETENTION: Record<StreamFamily, RetentionPolicy> = { events: RetentionPolicy.Limits, intake: RetentionPolicy.Workqueue };

/**
 * Creates the stream of `family` under this prefix (`STREAM_FAMILIES`; both have the same limits),
 * or brings an existing one to the configured replicas and limits (a stream created by an older
 * release, or with other settings, is updated in place; its events stay). Privileged:
 * only the operator identity may create a stream (the migration step runs it); services only look
 * at them (`checkEventStream`). The operator may not update one either (an update can drop every
 * event: `max_msgs: 1`), so under the generated permissions a stream whose limits differ is logged
 * and left as it is (`updateStream`). Each is created with its retention (`STREAM_RETENTION`): the
 * intake stream holds the deliveries waiting, not a week of them. JetStream cannot change a
 * stream's retention, so one found with another is refused (`checkRetention`), not adopted.
 */
export async function ensureEventStream(bus: Bus, family: StreamFamily = 'events'): Promise<string> {
  const jsm = await jetstreamManager(bus.nc);
  const name = streamName(bus.options.prefix, family);
  const settings = bus.options.stream ?? DEFAULT_STREAM_SETTINGS;
  const wanted: StreamLimits = {
    subjects: [bus.subject(`${family}.>`)],
    num_replicas: settings.replicas,
    max_bytes: settings.maxBytes,
    max_age: nanos(settings.maxAgeMs),
    duplicate_window: nanos(settings.duplicateWindowMs),
    // Full: refuse new events (the outbox keeps them and its age alerts) rather than drop unconsumed ones.
    discard: DiscardPolicy.New,
  };
  const current = await jsm.streams.info(name).catch((err: unknown) => {
    if (err instanceof JetStreamApiError) return undefined;
    throw err;
  });
  let info = current;
  if (!info) {
    try {
      info = await jsm.streams.add({ name, retention: STREAM_RETENTION[family], storage: StorageType.File, ...wanted });
    } catch (addErr) {
      // Another migration created it between our look-up and our add: reconcile it below.
      info = await jsm.streams.info(name).catch(() => {
        throw addErr;
      });
    }
  }
  checkRetention(info.config, family);
  await reconcileStream(bus, jsm, info.config, wanted);
  // Read again: the reconciliation may have changed the replicas.
  checkReplicas(await jsm.streams.info(name), settings.replicas);
  return name;
}

/**
 * What a service does at start instead of managing the streams: checks that the stream of `family`
 * exists and keeps as many copies as configured; it checks those it uses (`streamFamiliesOf`). Its
 * identity may read their info and nothing more of them.
 */
export async function checkEventStream(bus: Bus, family: StreamFamily = 'events'): Promise<string> {
  const jsm = await jetstreamManager(bus.nc);
  const name = streamName(bus.options.prefix, family);
  const info = await jsm.streams.info(name).catch((err: unknown) => {
    if (isApiError(err, JetStreamApiCodes.StreamNotFound))
      throw new Error(`The stream ${name} does not exist: the migration step creates it (MIGRATE_STREAMS)`);
    throw err;
  });
  checkRetention(info.config, family);
  checkReplicas(info, (bus.options.stream ?? DEFAULT_STREAM_SETTINGS).replicas);
  return name;
}

/**
 * A stream made by other means with another retention would break a promise: the events stream
 * as a work queue drops each event once one consumer settles it (partners could not replay it, and
 * every other durable would be refused), the intake stream under limits keeps every delivery for
 * the stream's age. JetStream refuses to change the retention in place, so the stream has to be
 * made again: the error says so.
 */
function checkRetention(config: StreamConfig, family: StreamFamily): void {
  const wanted = STREAM_RETENTION[family];
  if (config.retention === wanted) return;
  throw new Error(
    `The stream ${config.name} has ${config.retention} retention but its events need ${wanted}, and JetStream cannot change it in place: ` +
      'docs/operations.md ("Events (JetStream)") says how to make it again',
  );
}

const isApiError = (err: unknown, code: number) => err instanceof JetStreamApiError && err.code === code;

// A server that is not clustered accepts R3 and keeps one copy: starting anyway would promise a
// durability it lacks. The copies are the leader and the replicas its cluster info lists.
function checkReplicas({ config, cluster }: StreamInfo, wanted: number): void {
  const replicas = 1 + (cluster?.replicas?.length ?? 0);
  if (replicas < wanted) {
    throw new Error(
      `The events stream ${config.name} keeps ${replicas} replica(s) but ${wanted} are configured: run JetStream as a cluster of at least ${wanted} servers`,
    );
  }
}

type StreamLimits = Pick<StreamConfig, 'subjects' | 'num_replicas' | 'max_bytes' | 'max_age' | 'duplicate_window' | 'discard'>;

/** Updates the stream where it differs from `wanted` (or logs the difference, see `updateStream`). */
async function reconcileStream(bus: Bus, jsm: JetStreamManager, config: StreamConfig, wanted: StreamLimits): Promise<void> {
  const differing = (Object.keys(wanted) as Array<keyof StreamLimits>).filter(
    (key) => JSON.stringify(config[key]) !== JSON.stringify(wanted[key]),
  );
  if (differing.length > 0) await updateStream(bus, jsm, config, wanted, differing);
}

export interface PublishOptions {
  /** Deduplication id (JetStream `Nats-Msg-Id`): the outbox row id, so a re-publish is dropped. */
  msgId: string;
  ctx?: RequestContext;
  /** Trace headers captured when the event was recorded. */
  trace?: Record<string, string>;
}

/** Publishes an event on the stream that carries its subject and waits for the stream's acknowledgement. */
export async function publishEvent(bus: Bus, subject: string, payload: unknown, options: PublishOptions): Promise<PubAck> {
  const headers = buildHeaders(options.ctx);
  for (const [key, value] of Object.entries(options.trace ?? {})) headers.set(key, value);
  return jetstream(bus.nc).publish(bus.subject(subject), JSON.stringify(payload), { msgID: options.msgId, headers });
}

/** Thrown by a consumer handler for an event that can never succeed: it is terminated, not retried. */
export class PoisonEventError extends Error {
  override readonly name = 'PoisonEventError';
}

export interface EventMeta {
  eventId: string;
  subject: string;
  deliveryCount: number;
  /** Position in the stream: the order in which the events were published. */
  streamSequence: number;
  ctx: RequestContext | undefined;
}

export interface ConsumerOptions<E extends EventCatalog, S extends keyof E & string> {
  /** Durable name, shared by the replicas of one service: each event goes to one of them. */
  durable: string;
  events: E;
  subjects: readonly S[];
  handler: (subject: S, payload: PayloadOf<E, S>, meta: EventMeta) => Promise<void>;
  /** Messages processed at once by this process. */
  concurrency?: number;
  /** Pause before each redelivery, by attempt; the last value repeats. */
  backoffMs?: readonly number[];
  /**
   * The delivery a handler may treat as its last (`meta.deliveryCount >= maxDeliver`), to record a
   * failure of its own. Past it a retryable failure is still retried, at the longest backoff, and
   * logged as an error: only a poison event or a business-rule error is ever terminated, since a
   * terminated event is lost (a Postgres outage longer than the retries would drop every event in
   * hand).
   */
  maxDeliver?: number;
}

const RETRYABLE_CODES = new Set(['UNAVAILABLE', 'TIMEOUT', 'INTERNAL']);

/** How long a delivered event may stay unacknowledged before it is redelivered. */
const ACK_WAIT_MS = 30_000;
/**
 * Events delivered and not yet settled, over all replicas of the service (each takes at most its
 * concurrency): room for two replicas of webhook-ingest, whose deliveries wait in groups of 100.
 */
const MAX_ACK_PENDING = 512;

/** The durable consumer `durable` as it must be on the stream: pull, explicit acks, reading only `subjects`. */
function consumerConfig(bus: Bus, durable: string, subjects: readonly string[]): Partial<ConsumerConfig> {
  return {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // A single subject uses `filter_subject`, which every JetStream server supports; several need 2.10+.
    ...(subjects.length === 1 ? { filter_subject: bus.subject(subjects[0]!) } : { filter_subjects: subjects.map((s) => bus.subject(s)) }),
    // The service terminates an event after its own maxDeliver: the consumer never drops one by itself.
    max_deliver: -1,
    ack_wait: nanos(ACK_WAIT_MS),
    max_ack_pending: MAX_ACK_PENDING,
  };
}

/**
 * Creates the durable pull consumer `durable` reading `subjects` of the stream that carries them,
 * or brings an existing one to that configuration. Privileged like `ensureEventStream`: services
 * may not create consumers (a consumer's config can name a deliver subject, which no permission
 * can restrict), they bind to the ones the migration step made.
 */
export async function ensureConsumer(bus: Bus, durable: string, subjects: readonly string[]): Promise<void> {
  const jsm = await jetstreamManager(bus.nc);
  const stream = streamOfSubjects(bus, subjects);
  const config = consumerConfig(bus, durable, subjects);
  const exists = await jsm.consumers.info(stream, durable).then(
    () => true,
    (err: unknown) => {
      if (isApiError(err, JetStreamApiCodes.ConsumerNotFound)) return false;
      throw err;
    },
  );
  if (exists) {
    await jsm.consumers.update(stream, durable, config);
    return;
  }
  await jsm.consumers.add(stream, config).catch(async (addErr: unknown) => {
    // Another migration added it between our look-up and our add.
    await jsm.consumers.info(stream, durable).catch(() => {
      throw addErr;
    });
  });
}

/** The one stream that carries `subjects`: a consumer reads a single stream. */
function streamOfSubjects(bus: Bus, subjects: readonly string[]): string {
  const streams = [...new Set(subjects.map((subject) => streamOfSubject(bus.options.prefix, subject)))];
  if (streams.length !== 1) throw new Error(`A consumer reads one stream, and ${subjects.join(', ')} are on ${streams.length}`);
  return streams[0]!;
}

/**
 * Reads how far `durable`, a consumer of the events stream, has settled it: the sequence at and
 * before which every event it was given has been acknowledged or terminated, by whichever replica
 * handled it (the consumer's ack floor). An event past it may still be in a handler's hands, waiting a retry, or held by a
 * replica that died (until the ack wait ends).
 */
export async function settledSequence(bus: Bus, durable: string): Promise<() => Promise<number>> {
  const jsm = await jetstreamManager(bus.nc);
  const stream = streamName(bus.options.prefix);
  return async () => (await jsm.consumers.info(stream, durable)).ack_floor.stream_seq;
}

/**
 * Binds to the durable pull consumer made by `ensureConsumer`, with bounded concurrency. Every
 * message is parsed with its contract first (a payload that breaks it is terminated); success
 * acks, a retryable failure naks with backoff (however many times it failed), a poison event or a
 * business-rule error terminates with a logged reason. Handlers must be idempotent on
 * `meta.eventId`: redelivery after a crash is normal. A consumer that is missing or reads other
 * subjects stops the start.
 */
export async function startConsumer<E extends EventCatalog, S extends keyof E & string>(
  bus: Bus,
  options: ConsumerOptions<E, S>,
): Promise<void> {
  const jsm = await jetstreamManager(bus.nc);
  const stream = streamOfSubjects(bus, options.subjects);
  const concurrency = options.concurrency ?? 8;
  const backoff = options.backoffMs ?? [250, 1_000, 5_000, 15_000, 60_000];
  const maxDeliver = options.maxDeliver ?? 50;
  const info = await jsm.consumers.info(stream, options.durable).catch((err: unknown) => {
    if (isApiError(err, JetStreamApiCodes.ConsumerNotFound))
      throw new Error(`The consumer ${options.durable} of ${stream} does not exist: the migration step creates it (MIGRATE_STREAMS)`);
    throw err;
  });
  // A push consumer delivers wherever its config says, which no permission can restrict: one under
  // a declared name (the operator's grant cannot tell a pull config from a push one) is refused.
  if (info.config.deliver_subject)
    throw new Error(`The consumer ${options.durable} of ${stream} pushes to ${info.config.deliver_subject}: only pull consumers are used`);
  const wanted = options.subjects.map((s) => bus.subject(s)).sort();
  const reads = (info.config.filter_subjects ?? (info.config.filter_subject ? [info.config.filter_subject] : [])).slice().sort();
  if (JSON.stringify(reads) !== JSON.stringify(wanted)) {
    throw new Error(
      `The consumer ${options.durable} reads ${reads.join(', ') || 'everything'}, not ${wanted.join(', ')}: run the migration step`,
    );
  }
  const consumer = await jetstream(bus.nc).consumers.get(stream, options.durable);
  // Asks for more once a quarter of what it asked for is still to come (the client's default is
  // three quarters): a pull request per few events, not one per event.
  const messages = await consumer.consume({ max_messages: concurrency, threshold_messages: Math.floor(concurrency / 4) });
  const log = bus.logger.child({ consumer: options.durable });
  const prefixLength = bus.options.prefix.length + 1;
  const running = new Set<Promise<void>>();
  // An ack, nak or term that cannot be sent (the connection closing) leaves the event to be redelivered after the ack wait.
  const settle = (send: () => void) => {
    try {
      send();
    } catch (err) {
      log.warn({ err }, 'could not settle an event; it is redelivered after the ack wait');
    }
  };

  const processOne = async (m: JsMsg): Promise<void> => {
    const subject = m.subject.slice(prefixLength) as S;
    const eventId = m.headers?.has('Nats-Msg-Id') ? m.headers.get('Nats-Msg-Id') : `${m.info.stream}:${m.seq}`;
    const meta: EventMeta = {
      eventId,
      subject,
      deliveryCount: m.info.deliveryCount,
      streamSequence: m.seq,
      ctx: readRequestContext(m.headers),
    };
    const span = tracer.startSpan(`${subject} consume`, { kind: SpanKind.CONSUMER }, extractTraceContext(m.headers));
    try {
      await otelContext.with(trace.setSpan(otelContext.active(), span), async () => {
        const spec = options.events[subject];
        if (!spec) throw new PoisonEventError(`No contract for ${subject}`);
        let raw: unknown;
        try {
          raw = m.json();
        } catch {
          throw new PoisonEventError('Payload is not JSON');
        }
        const parsed = spec.payload.safeParse(raw);
        if (!parsed.success) throw new PoisonEventError(`Payload breaks the contract of ${subject}: ${parsed.error.message}`);
        await options.handler(subject, parsed.data as PayloadOf<E, S>, meta);
      });
      settle(() => m.ack());
      bus.options.observer?.consumed?.(options.durable, subject, 'ack', meta.deliveryCount);
    } catch (thrown) {
      const err = translatePgError(thrown);
      span.setStatus({ code: SpanStatusCode.ERROR });
      const retryable = !(err instanceof PoisonEventError) && (!isAppError(err) || RETRYABLE_CODES.has(err.code));
      if (retryable) {
        const delay = backoff[Math.min(meta.deliveryCount - 1, backoff.length - 1)] ?? 1_000;
        const fields = { err: thrown, eventId, subject, attempt: meta.deliveryCount, retryInMs: delay };
        // Never given up: what fails for a while (a database or a service away) is applied when it is back.
        if (meta.deliveryCount >= maxDeliver) log.error(fields, 'event still failing after its attempts; kept and retried');
        else log.warn(fields, 'event failed; will retry');
        settle(() => m.nak(delay));
        bus.options.observer?.consumed?.(options.durable, subject, 'nak', meta.deliveryCount);
      } else {
        log.error({ err: thrown, eventId, subject, attempt: meta.deliveryCount }, 'event terminated');
        // A bare +TERM: servers before 2.10.5 ignore one that carries a reason (the reason is logged above),
        // and the event came back after every ack wait, holding one of the consumer's pending slots for good.
        settle(() => m.term());
        bus.options.observer?.consumed?.(options.durable, subject, 'term', meta.deliveryCount);
      }
    } finally {
      span.end();
    }
  };

  const loop = (async () => {
    for await (const m of messages) {
      while (running.size >= concurrency) await Promise.race(running);
      const work = processOne(m);
      running.add(work);
      void work.finally(() => running.delete(work));
    }
    await Promise.allSettled([...running]);
  })();
  loop.catch((err: unknown) => log.error({ err }, 'consumer loop stopped'));

  bus.onDrain(async () => {
    await messages.close().catch(() => undefined);
    await loop.catch(() => undefined);
  });
}

export interface PerSubjectConsumerOptions<E extends EventCatalog, S extends keyof E & string> extends Omit<
  ConsumerOptions<E, S>,
  'durable' | 'subjects'
> {
  /** The durable name of each subject's consumer. */
  durables: Readonly<Record<S, string>>;
}

/**
 * One durable consumer per subject, all with the same handler: a consumer filtering on several
 * subjects needs JetStream 2.10, one per subject works on every server.
 */
export async function startConsumerPerSubject<E extends EventCatalog, S extends keyof E & string>(
  bus: Bus,
  options: PerSubjectConsumerOptions<E, S>,
): Promise<void> {
  const { durables, ...consumer } = options;
  for (const subject of Object.keys(durables) as S[]) {
    await startConsumer(bus, { ...consumer, durable: durables[subject], subjects: [subject] });
  }
}

/**
 * What the operator identity sets up before a release's services start (the migration step): the
 * streams and the durable consumers `BUS_IDENTITIES` declares for `services`.
 */
export async function provisionJetStream(bus: Bus, services: readonly string[]): Promise<void> {
  for (const family of STREAM_FAMILIES) await ensureEventStream(bus, family);
  if (services.includes('exports') && bus.options.exportStore) await ensureExportStore(bus, bus.options.exportStore);
  const identities: Readonly<Record<string, BusIdentity>> = BUS_IDENTITIES;
  for (const service of services) {
    for (const [durable, subject] of Object.entries(identities[service]?.consumers ?? {})) await ensureConsumer(bus, durable, [subject]);
  }
}
