import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import {
  StorageType,
  jetstream,
  type JetStreamManager,
  type LastForMsgRequest,
  type MsgRequest,
  type NextMsgRequest,
  type StoredMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Objm, type ObjectInfo } from '@nats-io/obj';
import { Empty, headers, nuid } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import { writeSnapshotExport, type LineBatch, type SnapshotExportOptions, type SnapshotReader } from '@erp/db';
import { RECURSOS_EXPORTACION } from '@erp/contracts';
import type { Bus, ExportStoreSettings } from './bus';

const nanos = (ms: number) => ms * 1_000_000;
const gzipMember = promisify(gzip);

/**
 * The services that write export files, each into a store of its own: a writer's identity may
 * publish to, and read, its own store only (an object's chunk subjects are random, so files in one
 * store cannot be told apart by subject), and the gateway reads them all.
 */
export const EXPORT_WRITERS = RECURSOS_EXPORTACION;
export type ExportWriter = (typeof EXPORT_WRITERS)[number];

/** Name of the object store of one writer's export files under a prefix (its stream is `OBJ_<name>`). */
export function exportStoreName(prefix: string, writer: ExportWriter): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_EXPORTS_${writer}`;
}

/** The name of an export file: `<writer>/<file>`, so whoever reads it knows the store it is in. */
export function exportFileName(writer: ExportWriter, file: string): string {
  return `${writer}/${file}`;
}

/** The writer whose store holds `name` (`exportFileName`); undefined for a name of no writer. */
export function exportWriterOf(name: string): ExportWriter | undefined {
  const writer = name.slice(0, name.indexOf('/'));
  return (EXPORT_WRITERS as readonly string[]).includes(writer) ? (writer as ExportWriter) : undefined;
}

function writerOf(name: string): ExportWriter {
  const writer = exportWriterOf(name);
  if (!writer) throw new Error(`export file ${name}: the name does not start with its writer (${EXPORT_WRITERS.join(', ')})`);
  return writer;
}

/** One writer's export store as this process uses it, opened once per bus. */
export interface ExportStore {
  /** The store's name; its stream is `OBJ_<bucket>`. */
  bucket: string;
  /** How long JetStream keeps a file (0: for ever), from the stream's configuration. */
  maxAgeMs: number;
  /**
   * One message of the store's stream, read without a consumer: by JetStream's direct get (any
   * copy answers) when the stream allows it, else by the stream leader's message get.
   */
  message(query: LastForMsgRequest | NextMsgRequest): Promise<StoredMsg | null>;
  /**
   * The same message as the stream's leader has it (its message get): the word that a message is
   * not there. A copy answering a direct get may not have caught up with its leader yet (a node
   * just restarted, or a write it has not applied: a write is acknowledged once a majority of the
   * copies has it), and says "no such message" for one that is.
   */
  leaderMessage(query: LastForMsgRequest | NextMsgRequest): Promise<StoredMsg | null>;
}

const stores = new WeakMap<Bus, Map<ExportWriter, Promise<ExportStore>>>();

/**
 * Creates each writer's export store of this prefix, with direct get allowed (files are read
 * without consumers) and an equal share of `maxBytes`. Privileged like the events stream: the operator's step
 * (`provisionJetStream`) does it; the services only write, read and remove files. A store that
 * exists keeps its settings unless the identity may change it (a local run without permissions):
 * the operator identity may not (a stream update can drop every file), so a store whose settings
 * differ from the configuration is logged, for an administrator to change by hand.
 */
export async function ensureExportStore(bus: Bus, settings: ExportStoreSettings): Promise<void> {
  const jsm = await jetstream(bus.nc).jetstreamManager();
  // The files of all writers together stay within the setting (the disk a JetStream server needs).
  const maxBytes = settings.maxBytes < 0 ? -1 : Math.floor(settings.maxBytes / EXPORT_WRITERS.length);
  for (const writer of EXPORT_WRITERS) {
    const name = exportStoreName(bus.options.prefix, writer);
    await new Objm(bus.nc).create(name, {
      storage: StorageType.File,
      replicas: settings.replicas,
      max_bytes: maxBytes,
      ttl: nanos(settings.maxAgeMs),
    });
    const info = await jsm.streams.info(`OBJ_${name}`);
    const wanted = {
      num_replicas: settings.replicas,
      max_bytes: maxBytes,
      max_age: nanos(settings.maxAgeMs),
      allow_direct: true,
    };
    const differing = (Object.keys(wanted) as Array<keyof typeof wanted>).filter((key) => info.config[key] !== wanted[key]);
    if (differing.length > 0) await updateStream(bus, jsm, info.config, wanted, differing);
  }
  // Opened again on next use, with the streams as they are now.
  stores.delete(bus);
}

/**
 * Brings a stream to `wanted`, or, when the identity may not update streams (the operator, under
 * the generated permissions), logs what differs and leaves it: the services run with the stream
 * as it is, and an administrator applies the change (`nats stream edit`) as a privileged user.
 */
export async function updateStream<C extends StreamConfig>(
  bus: Bus,
  jsm: JetStreamManager,
  config: C,
  wanted: Partial<C>,
  differing: ReadonlyArray<keyof C & string>,
): Promise<void> {
  const changed = Object.fromEntries(differing.map((k) => [k, { from: config[k], to: wanted[k] }]));
  try {
    await jsm.streams.update(config.name, { ...config, ...wanted });
    bus.logger.info({ stream: config.name, changed }, 'stream updated to the configuration');
  } catch (err) {
    if (!isPermissionError(err)) throw err;
    bus.logger.error(
      { stream: config.name, changed },
      'stream differs from the configuration and this identity may not change it: apply the change as a privileged NATS user',
    );
  }
}

const isPermissionError = (err: unknown) => err instanceof Error && /permission/i.test(err.message);

/** `writer`'s export store of this bus's prefix, opened once (it must exist: the operator's step creates it). */
export function exportStore(bus: Bus, writer: ExportWriter): Promise<ExportStore> {
  let opened = stores.get(bus);
  if (!opened) stores.set(bus, (opened = new Map()));
  let store = opened.get(writer);
  if (!store) {
    store = openExportStore(bus, writer);
    const cache = opened;
    store.catch(() => cache.delete(writer));
    opened.set(writer, store);
  }
  return store;
}

async function openExportStore(bus: Bus, writer: ExportWriter): Promise<ExportStore> {
  const bucket = exportStoreName(bus.options.prefix, writer);
  const stream = `OBJ_${bucket}`;
  const jsm = await jetstream(bus.nc).jetstreamManager();
  const { config } = await jsm.streams.info(stream);
  // The client's type names only `seq` or `last_by_subj`; the server takes `next_by_subj` too.
  const leaderMessage = (query: LastForMsgRequest | NextMsgRequest) => jsm.streams.getMessage(stream, query as MsgRequest);
  return {
    bucket,
    maxAgeMs: config.max_age / 1_000_000,
    message: config.allow_direct ? (query) => jsm.direct.getMessage(stream, query) : leaderMessage,
    leaderMessage,
  };
}

/**
 * A message of the store as any copy has it, and when that copy has none, as the leader has it:
 * only the leader's answer makes a file or a chunk missing. A copy never has a later message
 * without the earlier ones (it applies them in order), so what it has is what the leader has.
 */
async function storedMessage(store: ExportStore, query: LastForMsgRequest | NextMsgRequest): Promise<StoredMsg | null> {
  const message = await store.message(query);
  return message ?? (store.message === store.leaderMessage ? null : store.leaderMessage(query));
}

/** Batches compressed at once (on libuv's thread pool) ahead of the one being stored. */
const MEMBERS_IN_FLIGHT = 2;
/** zlib's output buffer per call back to JavaScript: a batch's member (a few hundred KB) in one or two, not dozens of 16 KB. */
const MEMBER_CHUNK = 512 * 1024;
/**
 * zlib's fastest level: JSON lines still shrink about six times, for a fraction of the default
 * level's CPU, which on a busy server is what the export and the requests beside it share.
 */
const MEMBER_LEVEL = 1;

/** Bytes per chunk message, as nats.js's object store writes them (within the server's max payload). */
const CHUNK_BYTES = 128 * 1024;

/** A file's metadata subject: its name in padded base64url, as nats.js keeps it. */
const metaSubject = (bucket: string, name: string) =>
  `$O.${bucket}.M.${Buffer.from(name).toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}`;
const chunkSubject = (bucket: string, nuid: string) => `$O.${bucket}.C.${nuid}`;

/** Replaces every message of `subject` with this one (JetStream's subject rollup): a purge of one subject by a publish. */
const rollup = () => {
  const h = headers();
  h.set('Nats-Rollup', 'sub');
  return h;
};

/**
 * Writes an NDJSON file, gzip-compressed, under `name` (`<writer>/<file>`, into that writer's
 * store) as the batches come (a few batches in memory at a time). Each batch is compressed apart,
 * several at once on libuv's threads, into a gzip member of its own; the file is the members in
 * order, which every gunzip (RFC 1952 §2.2) reads as one text. Stored as nats.js's object store
 * stores a file (chunks under a random id, then the metadata that makes it visible: a reader never
 * sees a partial file), by publishing only: a write that fails replaces its chunks with one empty
 * message (a rollup), as a writer may not purge its store's stream.
 */
export async function putNdjsonGzip(
  bus: Bus,
  name: string,
  batches: AsyncIterable<LineBatch>,
): Promise<{ objetos: number; bytes: number }> {
  const store = await exportStore(bus, writerOf(name));
  const js = jetstream(bus.nc);
  const id = nuid.next();
  const chunks = chunkSubject(store.bucket, id);
  const maxChunk = Math.min(CHUNK_BYTES, bus.nc.info?.max_payload ?? CHUNK_BYTES);
  let objetos = 0;
  const members = async function* () {
    const compressing: Array<Promise<Buffer>> = [];
    try {
      for await (const batch of batches) {
        if (batch.count === 0) continue;
        objetos += batch.count;
        const member = gzipMember(batch.lines, { chunkSize: MEMBER_CHUNK, level: MEMBER_LEVEL });
        void member.catch(() => undefined); // awaited in order below
        compressing.push(member);
        if (compressing.length >= MEMBERS_IN_FLIGHT) yield await compressing.shift()!;
      }
      while (compressing.length > 0) yield await compressing.shift()!;
      // No rows: still a gzip file (of an empty text), which a client can gunzip like any other.
      if (objetos === 0) yield await gzipMember('');
    } finally {
      compressing.length = 0;
    }
  };
  const hash = createHash('sha256');
  let size = 0;
  let count = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const publishChunk = async (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
    count++;
    await js.publish(chunks, chunk);
  };
  try {
    for await (const member of members()) {
      pending.push(member);
      pendingBytes += member.length;
      if (pendingBytes < maxChunk) continue;
      let buffer = Buffer.concat(pending);
      for (; buffer.length >= maxChunk; buffer = buffer.subarray(maxChunk)) await publishChunk(buffer.subarray(0, maxChunk));
      pending = buffer.length > 0 ? [buffer] : [];
      pendingBytes = buffer.length;
    }
    if (pendingBytes > 0) await publishChunk(Buffer.concat(pending));
    const info = {
      name,
      bucket: store.bucket,
      nuid: id,
      size,
      chunks: count,
      options: { max_chunk_size: maxChunk },
      mtime: new Date().toISOString(),
      // Padded base64url, as nats.js writes it.
      digest: `SHA-256=${hash.digest('base64').replace(/\+/g, '-').replace(/\//g, '_')}`,
      deleted: false,
    };
    await js.publish(metaSubject(store.bucket, name), JSON.stringify(info), { headers: rollup() });
    return { objetos, bytes: size };
  } catch (err) {
    if (count > 0) await js.publish(chunks, Empty, { headers: rollup() }).catch(() => undefined);
    throw err;
  }
}

/**
 * The bytes `start` to `end` (both included; the end of the file when omitted) of a stored file,
 * or undefined when there is no such file: when the stream's leader has none, whatever a copy
 * behind it answered (and for a name of no writer's store). Read chunk by chunk with one request
 * each, no consumer (a service may create none). The whole file is read, the bytes outside the
 * range dropped, so its size and digest are checked: the last bytes are held back until they
 * match, and a file that does not (a chunk missing or changed) fails the stream instead of ending it.
 */
export async function readObjectFrom(bus: Bus, name: string, start = 0, end = Number.POSITIVE_INFINITY): Promise<Readable | undefined> {
  const writer = exportWriterOf(name);
  if (!writer) return undefined;
  const store = await exportStore(bus, writer);
  const info = await fileInfo(store, name);
  if (!info || info.deleted) return undefined;
  return Readable.from(fileBytes(store, info, start, end), { objectMode: false });
}

async function fileInfo(store: ExportStore, name: string): Promise<ObjectInfo | undefined> {
  const meta = await storedMessage(store, { last_by_subj: metaSubject(store.bucket, name) });
  return meta?.json<ObjectInfo>();
}
async function* fileBytes(store: ExportStore, info: ObjectInfo, start: number, end: number): AsyncGenerator<Buffer> {
  const chunks = chunkSubject(store.bucket, info.nuid);
  const hash = createHash('sha256');
  let position = 0;
  let seq = 0;
  let held: Buffer | undefined;
  for (let n = 1; n <= info.chunks; n++) {
    const chunk = await storedMessage(store, { seq: seq + 1, next_by_subj: chunks });
    if (!chunk) throw new Error(`export file ${info.name}: chunk ${n} of ${info.chunks} is missing`);
    seq = chunk.seq;
    hash.update(chunk.data);
    const from = Math.max(start - position, 0);
    const to = Math.min(end + 1 - position, chunk.data.length);
    position += chunk.data.length;
    if (from < to) {
      if (held) yield held;
      held = Buffer.from(chunk.data.subarray(from, to));
    }
  }
  const digest = hash.digest();
  const expected = info.digest.startsWith('SHA-256=') ? Buffer.from(info.digest.slice('SHA-256='.length), 'base64url') : undefined;
  if (position !== info.size || !expected?.equals(digest))
    throw new Error(
      `export file ${info.name}: ${position} bytes read of ${info.size}, digest ${digest.toString('base64url')} for ${info.digest}`,
    );
  if (held) yield held;
}

/**
 * Removes a stored file of this identity's store; false when the name held none (no error). Its
 * metadata becomes a deletion mark and its chunks one empty message, each by a subject rollup: a
 * writer may publish to its own store's subjects, and purge nothing.
 */
export async function deleteObject(bus: Bus, name: string): Promise<boolean> {
  const store = await exportStore(bus, writerOf(name));
  const info = await fileInfo(store, name);
  if (!info || info.deleted) return false;
  const js = jetstream(bus.nc);
  await js.publish(metaSubject(store.bucket, name), JSON.stringify({ ...info, deleted: true, size: 0, chunks: 0, digest: '' }), {
    headers: rollup(),
  });
  await js.publish(chunkSubject(store.bucket, info.nuid), Empty, { headers: rollup() });
  return true;
}

/**
 * Writes the file of an export under `objeto` (`<writer>/<file>`) from ONE snapshot of the owner's
 * database (`writeSnapshotExport` of @erp/db): NDJSON, gzip, in the writer's store, pausing for
 * the service's requests as `options` says.
 */
export function writeExportFile<DB>(
  bus: Bus,
  db: Kysely<DB>,
  objeto: string,
  reader: SnapshotReader<DB>,
  options: SnapshotExportOptions = {},
): Promise<{ objetos: number; bytes: number; cursor: string }> {
  return writeSnapshotExport(
    db,
    reader,
    { write: (batches) => putNdjsonGzip(bus, objeto, batches) },
    { requestsReceived: () => bus.requestsReceived, ...options },
  );
}
