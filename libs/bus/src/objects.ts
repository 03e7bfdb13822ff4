import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { StorageType, jetstream } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
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

const stores = new WeakMap<Bus, Promise<ObjectStore>>();

/**
 * Creates the export store of this prefix, or brings an existing one to the configured replicas
 * and limits. Privileged like the events stream: the operator's step (`provisionJetStream`) does it;
 * the services, the exports service included, only write, read and remove files.
 */
export async function ensureExportStore(bus: Bus, settings: ExportStoreSettings): Promise<ObjectStore> {
  const name = exportStoreName(bus.options.prefix);
  const objm = new Objm(bus.nc);
  const store = await objm.create(name, {
    storage: StorageType.File,
    replicas: settings.replicas,
    max_bytes: settings.maxBytes,
    ttl: nanos(settings.maxAgeMs),
  });
  // `create` of an existing store keeps its settings: align the stream with the configuration.
  const jsm = await jetstream(bus.nc).jetstreamManager();
  const info = await jsm.streams.info(`OBJ_${name}`);
  const wanted = { num_replicas: settings.replicas, max_bytes: settings.maxBytes, max_age: nanos(settings.maxAgeMs) };
  if (Object.entries(wanted).some(([key, value]) => info.config[key as keyof typeof wanted] !== value)) {
    await jsm.streams.update(info.config.name, { ...info.config, ...wanted });
  }
  stores.set(bus, Promise.resolve(store));
  return store;
}

/** The export store of this bus's prefix, opened once (it must exist: the exports service creates it). */
export function exportStore(bus: Bus): Promise<ObjectStore> {
  let store = stores.get(bus);
  if (!store) {
    store = new Objm(bus.nc).open(exportStoreName(bus.options.prefix));
    store.catch(() => stores.delete(bus));
    stores.set(bus, store);
  }
  return store;
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
  const store = await exportStore(bus);
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
  const [info] = await Promise.all([store.put({ name }, Readable.toWeb(gzip) as ReadableStream<Uint8Array>), pipeline(lines, gzip)]);
  return { objetos, bytes: info.size };
}

/**
 * The bytes `start` to `end` (both included; the end of the file when omitted) of a stored file,
 * or undefined when there is no such file. The store reads a file from its first chunk: the bytes
 * before `start` are read and dropped.
 */
export async function readObjectFrom(bus: Bus, name: string, start = 0, end = Number.POSITIVE_INFINITY): Promise<Readable | undefined> {
  const store = await exportStore(bus);
  const result = await store.get(name);
  if (!result) return undefined;
  let position = 0;
  const slice = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const from = Math.max(start - position, 0);
      const to = Math.min(end + 1 - position, chunk.length);
      position += chunk.length;
      done(null, from < to ? chunk.subarray(from, to) : undefined);
    },
  });
  const source = Readable.fromWeb(result.data as WebReadableStream<Uint8Array>);
  source.on('error', (err) => slice.destroy(err));
  void result.error.then((err) => {
    if (err) slice.destroy(err);
  });
  return source.pipe(slice);
}

/** The names of the files in the store. */
export async function listObjects(bus: Bus): Promise<string[]> {
  const store = await exportStore(bus);
  return (await store.list()).map((info) => info.name);
}

/** Removes a stored file; a name that holds none is no error. */
export async function deleteObject(bus: Bus, name: string): Promise<void> {
  const store = await exportStore(bus);
  if (await store.info(name)) await store.delete(name);
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
