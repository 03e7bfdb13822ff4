import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { StorageType, jetstream, type LastForMsgRequest, type MsgRequest, type NextMsgRequest, type StoredMsg } from '@nats-io/jetstream';
import { Objm, type ObjectInfo, type ObjectStore } from '@nats-io/obj';
import { sql, type Kysely, type Transaction } from 'kysely';
import { inTransaction } from '@erp/db';
import type { Bus } from './bus';

const nanos = (ms: number) => ms * 1_000_000;

/** Name of the object store that holds the export files under a prefix (its stream is `OBJ_<name>`). */
export function exportStoreName(prefix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_EXPORTS`;
}

export interface ExportStoreSettings {
  /** Copies of each file on distinct JetStream servers, as for the events stream. */
  replicas: number;
  /** Bytes all files may take together (-1: no limit); full, a new export fails instead of evicting another. */
  maxBytes: number;
  /**
   * Files older than this are removed by JetStream whatever the job records say: the backstop for a
   * file written by an attempt whose worker died after its job moved on.
   */
  maxAgeMs: number;
}

/** The export store as this process uses it, opened once per bus. */
export interface ExportStore {
  /** nats.js's store: writes and removes files (publishes and purges; no consumer). */
  files: ObjectStore;
  /** The store's name; its stream is `OBJ_<bucket>`. */
  bucket: string;
  /** How long JetStream keeps a file (0: for ever), from the stream's configuration. */
  maxAgeMs: number;
  /**
   * One message of the store's stream, read without a consumer: by JetStream's direct get (any
   * copy answers) when the stream allows it, else by the stream leader's message get.
   */
  message(query: LastForMsgRequest | NextMsgRequest): Promise<StoredMsg | null>;
}

const stores = new WeakMap<Bus, Promise<ExportStore>>();

/**
 * Creates the export store of this prefix, or brings an existing one to the configured replicas
 * and limits, with direct get allowed (files are read without consumers). Privileged like the
 * events stream: the operator's step (`provisionJetStream`) does it; the services, the exports
 * service included, only write, read and remove files.
 */
export async function ensureExportStore(bus: Bus, settings: ExportStoreSettings): Promise<void> {
  const name = exportStoreName(bus.options.prefix);
  await new Objm(bus.nc).create(name, {
    storage: StorageType.File,
    replicas: settings.replicas,
    max_bytes: settings.maxBytes,
    ttl: nanos(settings.maxAgeMs),
  });
  // `create` of an existing store keeps its settings: align the stream with the configuration.
  const jsm = await jetstream(bus.nc).jetstreamManager();
  const info = await jsm.streams.info(`OBJ_${name}`);
  const wanted = {
    num_replicas: settings.replicas,
    max_bytes: settings.maxBytes,
    max_age: nanos(settings.maxAgeMs),
    allow_direct: true,
  };
  if (Object.entries(wanted).some(([key, value]) => info.config[key as keyof typeof wanted] !== value)) {
    await jsm.streams.update(info.config.name, { ...info.config, ...wanted });
  }
  // Opened again on next use, with the stream as it is now.
  stores.delete(bus);
}

/** The export store of this bus's prefix, opened once (it must exist: the operator's step creates it). */
export function exportStore(bus: Bus): Promise<ExportStore> {
  let store = stores.get(bus);
  if (!store) {
    store = openExportStore(bus);
    store.catch(() => stores.delete(bus));
    stores.set(bus, store);
  }
  return store;
}

async function openExportStore(bus: Bus): Promise<ExportStore> {
  const bucket = exportStoreName(bus.options.prefix);
  const stream = `OBJ_${bucket}`;
  const jsm = await jetstream(bus.nc).jetstreamManager();
  const { config } = await jsm.streams.info(stream);
  return {
    files: await new Objm(bus.nc).open(bucket, false),
    bucket,
    maxAgeMs: config.max_age / 1_000_000,
    message: config.allow_direct
      ? (query) => jsm.direct.getMessage(stream, query)
      : // The client's type names only `seq` or `last_by_subj`; the server takes `next_by_subj` too.
        (query) => jsm.streams.getMessage(stream, query as MsgRequest),
  };
}

/** A run of consecutive lines of an export file: their count and their text, joined by newlines. */
export interface LineBatch {
  count: number;
  text: string;
}

/**
 * Writes an NDJSON file, gzip-compressed, under `name` as the batches come (a batch in memory at a
 * time). The object becomes visible only once complete: a reader never sees a partial file.
 */
export async function putNdjsonGzip(
  bus: Bus,
  name: string,
  batches: AsyncIterable<LineBatch>,
): Promise<{ objetos: number; bytes: number }> {
  const { files } = await exportStore(bus);
  let objetos = 0;
  const lines = Readable.from(
    (async function* () {
      for await (const batch of batches) {
        if (batch.count === 0) continue;
        objetos += batch.count;
        yield `${batch.text}\n`;
      }
    })(),
  );
  const gzip = createGzip();
  // Both settle: a failed read destroys the gzip stream, which fails the put, and the other way round.
  const [info] = await Promise.all([files.put({ name }, Readable.toWeb(gzip) as ReadableStream<Uint8Array>), pipeline(lines, gzip)]);
  return { objetos, bytes: info.size };
}

/**
 * The bytes `start` to `end` (both included; the end of the file when omitted) of a stored file,
 * or undefined when there is no such file. Read chunk by chunk with one request each, no consumer
 * (a service may create none). The whole file is read, the bytes outside the range dropped, so its
 * size and digest are checked: the last bytes are held back until they match, and a file that
 * does not (a chunk missing or changed) fails the stream instead of ending it.
 */
export async function readObjectFrom(bus: Bus, name: string, start = 0, end = Number.POSITIVE_INFINITY): Promise<Readable | undefined> {
  const store = await exportStore(bus);
  // nats.js keeps a file's metadata under its name in padded base64url (export names are ASCII).
  const encoded = Buffer.from(name).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  const meta = await store.message({ last_by_subj: `$O.${store.bucket}.M.${encoded}` });
  const info = meta?.json<ObjectInfo>();
  if (!info || info.deleted) return undefined;
  return Readable.from(fileBytes(store, info, start, end), { objectMode: false });
}

async function* fileBytes(store: ExportStore, info: ObjectInfo, start: number, end: number): AsyncGenerator<Buffer> {
  const chunks = `$O.${store.bucket}.C.${info.nuid}`;
  const hash = createHash('sha256');
  let position = 0;
  let seq = 0;
  let held: Buffer | undefined;
  for (let n = 1; n <= info.chunks; n++) {
    const chunk = await store.message({ seq: seq + 1, next_by_subj: chunks });
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

/** Removes a stored file; false when the name held none (no error). */
export async function deleteObject(bus: Bus, name: string): Promise<boolean> {
  const { files } = await exportStore(bus);
  const info = await files.info(name);
  if (!info || info.deleted) return false;
  await files.delete(name);
  return true;
}

/** How an owning service reads an export from one snapshot. */
export interface SnapshotReader<DB> {
  /** The delta-sync cursor of the transaction's snapshot; the first statement, so it takes the snapshot. */
  cursor(trx: Transaction<DB>): Promise<string>;
  /** Up to `limit` rows after id `afterId`, by id, as the JSON lines their GET answers. */
  batch(trx: Transaction<DB>, afterId: number, limit: number): Promise<LineBatch & { lastId: number }>;
}

/**
 * Writes the file of an export from ONE repeatable-read, read-only snapshot: every line is its row
 * as of the same moment, and the cursor continues delta sync from that moment. Rows are read by id
 * in batches, so memory holds one batch whatever the size of the export.
 */
export async function writeSnapshotExport<DB>(
  bus: Bus,
  db: Kysely<DB>,
  objeto: string,
  reader: SnapshotReader<DB>,
  batchSize = 1_000,
): Promise<{ objetos: number; bytes: number; cursor: string }> {
  return inTransaction(
    db,
    async (trx) => {
      await sql`set transaction read only`.execute(trx);
      const cursor = await reader.cursor(trx);
      // The next batch is read while the current one is compressed and stored: Postgres and
      // zlib (on libuv's threads) work at the same time.
      const batches = async function* () {
        let next = reader.batch(trx, 0, batchSize);
        for (;;) {
          void next.catch(() => undefined); // awaited below; a write that fails first leaves it unread
          const batch = await next;
          const more = batch.count === batchSize;
          if (more) next = reader.batch(trx, batch.lastId, batchSize);
          if (batch.count > 0) yield batch;
          if (!more) return;
        }
      };
      return { ...(await putNdjsonGzip(bus, objeto, batches())), cursor };
    },
    { isolation: 'repeatable read' },
  );
}
