import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { StorageType, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { defineCatalog } from '@erp/contracts';
import {
  changeCursorAfterSnapshot,
  createDb,
  decodeChangeCursor,
  inTransaction,
  installChangeStamp,
  readChangePage,
  type ChangeCursor,
} from '@erp/db';
import { harness, until, type Harness } from '@erp/testing';
import { deleteObject, ensureExportStore, exportStoreName, putNdjsonGzip, readObjectFrom, writeExportFile, type Bus } from '../src';

const settings = { replicas: 1, maxBytes: -1, maxAgeMs: 3_600_000 };

/** A file's name in its metadata's subject, as nats.js writes it: padded base64url. */
const encodedName = (name: string) => Buffer.from(name).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');

async function bytesOf(file: Readable | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file!) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Lines of random hex: gzip cannot shrink them below half, so the file spans several 128 KiB chunks. */
async function* randomLines(count: number) {
  for (let i = 0; i < count; i++) {
    const lines = Array.from({ length: 100 }, (_, j) => JSON.stringify({ id: i * 100 + j, x: randomBytes(48).toString('hex') }));
    yield { count: lines.length, lines: `${lines.join('\n')}\n` };
  }
}

/**
 * Export files in a real JetStream object store, read back without any consumer: a direct get
 * per chunk, or the stream leader's message get where the stream does not allow direct get.
 */
describe('export files read chunk by chunk', () => {
  let h: Harness<unknown>;
  let bus: Bus;
  let jsm: JetStreamManager;
  let stream: string;
  // A new connection opens the store afresh (the store's settings are read once per connection).
  const reader = () => h.connect('reader');

  beforeAll(async () => {
    h = await harness('objects');
    bus = h.bus;
    jsm = await jetstreamManager(bus.nc);
    stream = `OBJ_${exportStoreName(h.iso.subjectPrefix, 'sales')}`;
  });
  afterAll(() => h?.close());

  it('gives a store that did not allow direct get the setting, and reads a file through either way', async () => {
    // A store made by hand, or by a client that left direct get off.
    await new Objm(bus.nc).create(exportStoreName(h.iso.subjectPrefix, 'sales'), { ttl: settings.maxAgeMs * 1_000_000 });
    const made = (await jsm.streams.info(stream)).config;
    await jsm.streams.update(stream, { ...made, allow_direct: false });
    await putNdjsonGzip(bus, 'sales/sin-directo.ndjson.gz', randomLines(2));
    // Direct get would find no one to answer: the leader's message get reads it.
    const before = await reader();
    const viaLeader = await bytesOf(await readObjectFrom(before, 'sales/sin-directo.ndjson.gz'));
    expect(gunzipSync(viaLeader).toString().split('\n')).toHaveLength(201);

    await ensureExportStore(bus, settings);
    expect((await jsm.streams.info(stream)).config).toMatchObject({ allow_direct: true, max_age: settings.maxAgeMs * 1_000_000 });
    const after = await reader();
    expect((await bytesOf(await readObjectFrom(after, 'sales/sin-directo.ndjson.gz'))).equals(viaLeader)).toBe(true);
    expect(await bytesOf(await readObjectFrom(after, 'sales/sin-directo.ndjson.gz', 5, 9))).toEqual(viaLeader.subarray(5, 10));
  });

  it('reads a file of several chunks whole, and any range of it, across chunk boundaries', async () => {
    const { bytes } = await putNdjsonGzip(bus, 'sales/grande.ndjson.gz', randomLines(80));
    const info = await (await new Objm(bus.nc).open(exportStoreName(h.iso.subjectPrefix, 'sales'))).info('sales/grande.ndjson.gz');
    expect(info!.chunks).toBeGreaterThanOrEqual(3);
    const chunk = info!.options!.max_chunk_size!;
    const whole = await bytesOf(await readObjectFrom(bus, 'sales/grande.ndjson.gz'));
    expect(whole.length).toBe(bytes);
    expect(gunzipSync(whole).toString().split('\n')).toHaveLength(8_001);
    for (const [start, end] of [
      [0, 0],
      [chunk - 1, chunk],
      [chunk, 2 * chunk - 1],
      [chunk + 17, 2 * chunk + 17],
      [bytes - 1, bytes - 1],
    ] as const) {
      const range = await bytesOf(await readObjectFrom(bus, 'sales/grande.ndjson.gz', start, end));
      expect({ start, end, length: range.length, same: range.equals(whole.subarray(start, end + 1)) }).toEqual({
        start,
        end,
        length: end - start + 1,
        same: true,
      });
    }
    expect((await bytesOf(await readObjectFrom(bus, 'sales/grande.ndjson.gz', chunk + 3))).equals(whole.subarray(chunk + 3))).toBe(true);
    // Read with messages, never a consumer.
    expect((await jsm.consumers.list(stream).next()).length).toBe(0);
  });

  it('answers undefined for a file that is not there or was removed', async () => {
    await expect(readObjectFrom(bus, 'sales/nunca.ndjson.gz')).resolves.toBeUndefined();
    await putNdjsonGzip(bus, 'sales/borrado.ndjson.gz', randomLines(1));
    await expect(deleteObject(bus, 'sales/borrado.ndjson.gz')).resolves.toBe(true);
    await expect(readObjectFrom(bus, 'sales/borrado.ndjson.gz')).resolves.toBeUndefined();
    await expect(deleteObject(bus, 'sales/borrado.ndjson.gz')).resolves.toBe(false);
    await expect(deleteObject(bus, 'sales/nunca.ndjson.gz')).resolves.toBe(false);
  });

  it('removes a file by publishing only: its metadata marked deleted, its chunks rolled up into one empty message', async () => {
    const name = 'sales/enrollado.ndjson.gz';
    await putNdjsonGzip(bus, name, randomLines(40));
    const store = await new Objm(bus.nc).open(exportStoreName(h.iso.subjectPrefix, 'sales'));
    const info = (await store.info(name))!;
    const chunks = `$O.${info.bucket}.C.${info.nuid}`;
    const kept = async () => (await jsm.streams.info(stream, { subjects_filter: chunks })).state.subjects?.[chunks];
    expect(info.chunks).toBeGreaterThanOrEqual(2);
    expect(await kept()).toBe(info.chunks);
    await expect(deleteObject(bus, name)).resolves.toBe(true);
    // nats.js's own reading agrees: the file is deleted.
    expect((await store.info(name))?.deleted).toBe(true);
    expect(await kept()).toBe(1);
    expect((await jsm.direct.getMessage(stream, { last_by_subj: chunks }))!.data.length).toBe(0);
  });

  it('fails a write with its cause and leaves one empty message of the chunks it had stored', async () => {
    const name = 'sales/cortado.ndjson.gz';
    const failing = async function* () {
      yield* randomLines(80);
      throw new Error('lectura cortada');
    };
    const before = (await jsm.streams.info(stream)).state.bytes;
    await expect(putNdjsonGzip(bus, name, failing())).rejects.toThrow('lectura cortada');
    expect((await jsm.streams.info(stream)).state.bytes - before).toBeLessThan(1_000);
    await expect(readObjectFrom(bus, name)).resolves.toBeUndefined();
  });

  it('stores an export with no rows as a gzip file of an empty text', async () => {
    const none = async function* () {
      yield { count: 0, lines: '' };
    };
    const written = await putNdjsonGzip(bus, 'sales/vacio.ndjson.gz', none());
    const bytes = await bytesOf(await readObjectFrom(bus, 'sales/vacio.ndjson.gz'));
    expect(written).toEqual({ objetos: 0, bytes: bytes.length });
    expect(bytes.length).toBeGreaterThan(0);
    expect(gunzipSync(bytes).toString()).toBe('');
  });

  it('fails the read of a file whose chunk is missing or changed, holding back its last bytes', async () => {
    const store = await new Objm(bus.nc).open(exportStoreName(h.iso.subjectPrefix, 'sales'));
    const chunkSeqs = async (name: string) => {
      const info = (await store.info(name))!;
      const seqs: number[] = [];
      for (let n = 0, seq = 0; n < info.chunks; n++) {
        seq = (await jsm.direct.getMessage(stream, { seq: seq + 1, next_by_subj: `$O.${info.bucket}.C.${info.nuid}` }))!.seq;
        seqs.push(seq);
      }
      return { info, seqs };
    };

    await putNdjsonGzip(bus, 'sales/sin-trozo.ndjson.gz', randomLines(80));
    const missing = await chunkSeqs('sales/sin-trozo.ndjson.gz');
    await jsm.streams.deleteMessage(stream, missing.seqs[1]!);
    const received: Buffer[] = [];
    const failed = await readObjectFrom(bus, 'sales/sin-trozo.ndjson.gz')
      .then(async (file) => {
        for await (const chunk of file!) received.push(chunk as Buffer);
      })
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(Error);
    expect(String(failed)).toContain(`chunk ${missing.info.chunks} of ${missing.info.chunks} is missing`);
    expect(Buffer.concat(received).length).toBeLessThan(missing.info.size);

    // Its last chunk replaced by other bytes of the same length: the size is right, the digest not.
    await putNdjsonGzip(bus, 'sales/cambiado.ndjson.gz', randomLines(80));
    const changed = await chunkSeqs('sales/cambiado.ndjson.gz');
    const last = (await jsm.direct.getMessage(stream, { seq: changed.seqs.at(-1)! }))!;
    await jsm.streams.deleteMessage(stream, last.seq);
    await bus.nc.request(last.subject, randomBytes(last.data.length));
    const read = await readObjectFrom(bus, 'sales/cambiado.ndjson.gz', 0);
    const got: Buffer[] = [];
    await expect(
      (async () => {
        for await (const chunk of read!) got.push(chunk as Buffer);
      })(),
    ).rejects.toThrow(/digest/);
    // Everything but the last chunk's bytes, which were held back until the digest was checked.
    expect(Buffer.concat(got).length).toBe(changed.info.size - last.data.length);
  });

  it('shares the configured bytes evenly among the writers’ stores', async () => {
    await ensureExportStore(bus, { ...settings, maxBytes: 3 * 64 * 1024 * 1024 });
    for (const writer of ['sales', 'returns', 'inventory'] as const) {
      const { config } = await jsm.streams.info(`OBJ_${exportStoreName(h.iso.subjectPrefix, writer)}`);
      expect({ writer, maxBytes: config.max_bytes }).toEqual({ writer, maxBytes: 64 * 1024 * 1024 });
    }
    await ensureExportStore(bus, settings);
    expect((await jsm.streams.info(stream)).config.max_bytes).toBe(-1);
  });

  it('reads a file whole while a copy of the store that lacks part of it answers direct gets: only the leader says a file or a chunk is missing', async () => {
    const name = 'sales/tras-la-copia.ndjson.gz';
    await putNdjsonGzip(bus, name, randomLines(40));
    const bucket = exportStoreName(h.iso.subjectPrefix, 'sales');
    const info = (await (await new Objm(bus.nc).open(bucket)).info(name))!;
    expect(info.chunks).toBeGreaterThanOrEqual(2);
    const whole = await bytesOf(await readObjectFrom(await reader(), name));
    expect(whole.length).toBe(info.size);
    const readBack = async (bus: Bus): Promise<string> => {
      try {
        const file = await readObjectFrom(bus, name);
        return file ? ((await bytesOf(file)).equals(whole) ? 'the file' : 'other bytes') : 'no file';
      } catch (err) {
        return String(err);
      }
    };
    // A copy that answers direct gets (as each follower of the store's stream does) and is behind
    // its leader (restarted and catching up, or not yet applied a write a majority acknowledged):
    // a mirror taking only chunks has no file's metadata; one from the file's metadata on, no chunk of it.
    const lacking = {
      metadata: { name: stream, filter_subject: `$O.${bucket}.C.>` },
      chunks: { name: stream, opt_start_seq: info.revision },
    };
    for (const [what, mirror] of Object.entries(lacking)) {
      const copy = `${stream}_SIN_${what.toUpperCase()}`;
      // Rollups allowed, as in the store: a removal's messages are rollups, which a copy without the setting stops at.
      await jsm.streams.add({ name: copy, storage: StorageType.File, mirror, mirror_direct: true, allow_rollup_hdrs: true });
      try {
        // It joins the direct gets once it has caught up with what it takes: some then say the file's metadata or first chunk is not there.
        const asked =
          what === 'metadata'
            ? { last_by_subj: `$O.${bucket}.M.${encodedName(name)}` }
            : { seq: 1, next_by_subj: `$O.${bucket}.C.${info.nuid}` };
        await until(
          async () => {
            const answers = await Promise.all(Array.from({ length: 20 }, () => jsm.direct.getMessage(stream, asked)));
            return answers.some((answer) => answer === null);
          },
          10_000,
          100,
          `the copy without the ${what} answering direct gets`,
        );
        const partner = await reader();
        const answers = [];
        for (let i = 0; i < 20; i++) answers.push(await readBack(partner));
        expect(answers).toEqual(Array.from({ length: 20 }, () => 'the file'));
      } finally {
        await jsm.streams.delete(copy);
      }
    }
    // Still nothing where the leader has nothing.
    await expect(readObjectFrom(bus, 'sales/nunca-escrito.ndjson.gz')).resolves.toBeUndefined();
  });
});

/**
 * An export file written by several transactions at once, all on the first one's snapshot, while
 * another transaction keeps changing every row and adding one: each commit leaves every row with
 * the same `version` and `2,000 + version` rows, so a file of one snapshot has a single version and
 * that many lines, and any line read from another snapshot would show.
 */
describe('an export read by several transactions on one snapshot', () => {
  let h: Harness<unknown>;
  // Each batch's read takes 20 ms at least (pg_sleep runs once per statement): the ~40 batches take
  // the first reader most of a second, time for the others to connect and import the snapshot. At
  // full speed a reader took every batch before the others had begun on a machine busy with other
  // suites, which this test must not mistake for one snapshot's readers not sharing the work.
  const rows = () =>
    sql<{ id: number; json: string }>`
      select f.id, json_build_object('id', f.id, 'version', f.version, 'lector', pg_backend_pid())::text as json
      from filas f cross join pg_sleep(0.02)`;

  beforeAll(async () => {
    h = await harness('snapshot-export', { poolMax: 6 });
    await ensureExportStore(h.bus, settings);
    await sql`create table filas (id serial primary key, version int not null default 0)`.execute(h.db);
    await sql`insert into filas (version) select 0 from generate_series(1, 2000)`.execute(h.db);
  });
  afterAll(() => h?.close());

  it('writes every row as of one snapshot, in id order, read by three transactions, with the cursor of that snapshot', async () => {
    let writing = true;
    let commits = 0;
    const writer = (async () => {
      while (writing) {
        await sql`with v as (update filas set version = version + 1 returning version)
                  insert into filas (version) select max(version) from v`.execute(h.db);
        commits++;
      }
    })();
    await until(() => commits >= 3);
    const written = await writeExportFile(
      h.bus,
      h.db,
      'sales/una-foto.ndjson.gz',
      { cursor: changeCursorAfterSnapshot, rows },
      { batchSize: 50, readers: 3 },
    );
    const during = commits;
    writing = false;
    await writer;

    const text = gunzipSync(await bytesOf(await readObjectFrom(h.bus, 'sales/una-foto.ndjson.gz'))).toString();
    const lines = text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { id: number; version: number; lector: number });
    const versions = new Set(lines.map((l) => l.version));
    expect(versions.size).toBe(1);
    const [version] = [...versions];
    expect(lines).toHaveLength(2_000 + version!);
    expect(written.objetos).toBe(lines.length);
    expect(lines.map((l) => l.id)).toEqual([...lines.map((l) => l.id)].sort((a, b) => a - b));
    // Three transactions read it, and the writer committed while they did (the version counts the commits before the snapshot).
    expect(new Set(lines.map((l) => l.lector)).size).toBe(3);
    expect(during).toBeGreaterThan(version!);
    expect(typeof written.cursor).toBe('string');
  });

  it('hands over to the change feed from the snapshot its lines were read from: the lines then the feed after its cursor are the table now, and no line comes again unchanged', async () => {
    interface CambiosDb {
      cambios: { id: number; empresa_id: number; version: number };
    }
    const db = h.db as unknown as Kysely<CambiosDb>;
    await sql`create table cambios (id serial primary key, empresa_id int not null default 1, version int not null default 0)`.execute(
      h.db,
    );
    await installChangeStamp(h.db, 'cambios');
    await sql`insert into cambios (version) select 0 from generate_series(1, 2000)`.execute(h.db);
    // Each commit changes a seventh of the rows to its own number and adds one, all while the file is written.
    const commit = (n: number) =>
      sql`with u as (update cambios set version = ${n} where id % 7 = ${n % 7} returning 1)
          insert into cambios (version) values (${n})`.execute(h.db);
    let writing = true;
    let commits = 0;
    const writer = (async () => {
      while (writing) await commit(++commits);
    })();
    await until(() => commits >= 3);
    // Each batch takes 10 ms at least, so that commits land between the snapshot and the file's end.
    const rows = () =>
      sql<{ id: number; json: string }>`
        select c.id, json_build_object('id', c.id, 'version', c.version)::text as json from cambios c, (select pg_sleep(0.01)) s`;
    const started = commits;
    const written = await writeExportFile(
      h.bus,
      h.db,
      'sales/con-cursor.ndjson.gz',
      { cursor: changeCursorAfterSnapshot, rows },
      { batchSize: 50, readers: 3 },
    );
    writing = false;
    await writer;
    expect(commits - started).toBeGreaterThanOrEqual(3);
    // One change after the file's end, to one seventh only: the others' changes while it was written come from its cursor alone.
    await commit(++commits);

    // The feed answers a change once every transaction older than it has ended (those of other test files too).
    const { rows: last } = await sql<{ x: string }>`select max(cambio_xid)::text as x from cambios`.execute(h.db);
    await until(
      async () => {
        const { rows: horizon } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(h.db);
        return BigInt(horizon[0]!.xmin) > BigInt(last[0]!.x);
      },
      45_000,
      20,
      'the feed’s horizon past the last change',
    );
    const file = new Map(
      gunzipSync(await bytesOf(await readObjectFrom(h.bus, 'sales/con-cursor.ndjson.gz')))
        .toString()
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as { id: number; version: number })
        .map((line) => [line.id, line.version]),
    );
    expect(file.size).toBe(written.objetos);
    const followed = new Map<number, number>();
    for (let position: ChangeCursor | undefined = decodeChangeCursor(written.cursor); ;) {
      const page = await inTransaction(
        db,
        (trx) =>
          readChangePage(trx.selectFrom('cambios as c').select(['c.id', 'c.version']), { table: 'c', after: position, perPage: 500 }),
        { isolation: 'repeatable read' },
      );
      for (const row of page.rows) followed.set(row.id, row.version);
      if (!page.more) break;
      position = page.positions.at(-1);
    }
    // Changes came after the snapshot, and each row the feed answers changed after it (a line never comes again as it was).
    expect(followed.size).toBeGreaterThan(0);
    expect([...followed].filter(([id, version]) => file.has(id) && version <= file.get(id)!)).toEqual([]);
    const merged = new Map([...file, ...followed]);
    const now = await db.selectFrom('cambios').select(['id', 'version']).orderBy('id').execute();
    expect([...merged].sort(([x], [y]) => x - y)).toEqual(now.map((r) => [r.id, r.version]));
  });

  it('reads the export from the primary when the replica is out of reach, or has a transaction in flight in every snapshot it gives', async () => {
    const sources: string[] = [];
    const onSource = (source: string) => void sources.push(source);
    const unreachable = createDb({ connectionString: 'postgres://postgres@127.0.0.1:1/erp', max: 1, connectTimeoutMs: 500 });
    try {
      const written = await writeExportFile(
        h.bus,
        h.db,
        'sales/sin-replica.ndjson.gz',
        { cursor: changeCursorAfterSnapshot, rows },
        { batchSize: 500, readers: 2, replica: unreachable, onSource },
      );
      expect(written.objetos).toBeGreaterThanOrEqual(2_000);
    } finally {
      await unreachable.destroy();
    }
    // A transaction holding an id, and a later one committed: every snapshot after has the first in
    // flight below its xmax, which a replica's snapshot would not name.
    const inFlight = await h.pool.connect();
    try {
      await inFlight.query('begin');
      await inFlight.query('select pg_current_xact_id()');
      await sql`select pg_current_xact_id()`.execute(h.db);
      const written = await writeExportFile(
        h.bus,
        h.db,
        'sales/replica-ocupada.ndjson.gz',
        { cursor: changeCursorAfterSnapshot, rows },
        { batchSize: 500, readers: 2, replica: h.db, onSource },
      );
      expect(written.objetos).toBeGreaterThanOrEqual(2_000);
      // Read on the primary: its snapshot names the transaction in flight, so the cursor carries it.
      expect(decodeChangeCursor(written.cursor)?.snapshot).toBeDefined();
    } finally {
      await inFlight.query('rollback');
      inFlight.release();
    }
    expect(sources).toEqual(['primary', 'primary']);
  });
});

/**
 * An export is background work: it pauses after a batch only when the service answered other
 * requests meanwhile (the bus counts the requests it receives), and writes the same file either way.
 */
describe('an export beside the service’s requests', () => {
  let h: Harness<unknown>;
  let client: Bus;
  const catalog = defineCatalog({
    'ping.read': { tenant: false, errors: [], request: z.object({}), reply: z.object({ ok: z.boolean() }) },
  });
  // Each statement takes at least 50 ms, so requests arrive while every batch is read.
  const rows = () =>
    sql<{ id: number; json: string }>`select f.id, json_build_object('id', f.id)::text as json from pausa f, (select pg_sleep(0.05)) s`;
  const exportOf = async (name: string, yieldToRequests: number, readers = 1) => {
    const pauses: number[] = [];
    const written = await writeExportFile(
      h.bus,
      h.db,
      name,
      { cursor: changeCursorAfterSnapshot, rows },
      { batchSize: 100, readers, yieldToRequests, onPause: (ms) => pauses.push(ms) },
    );
    const lines = gunzipSync(await bytesOf(await readObjectFrom(h.bus, name)))
      .toString()
      .split('\n');
    return { written, pauses, lines };
  };
  /** `work`, while a client keeps sending the service requests one after another. */
  const whileRequested = async <T>(work: () => Promise<T>): Promise<T> => {
    let requesting = true;
    // Four at a time, so that a slow answer on a busy machine leaves no batch without company.
    const requests = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (requesting) await client.request(catalog, 'ping.read', {}, { requestId: 'lectura' });
      }),
    );
    try {
      return await work();
    } finally {
      requesting = false;
      await requests;
    }
  };

  beforeAll(async () => {
    h = await harness('export-pacing');
    await ensureExportStore(h.bus, settings);
    h.bus.serve(catalog, { 'ping.read': async () => ({ ok: true }) }, { queue: 'pacing' });
    client = await h.connect('client');
    await sql`create table pausa (id serial primary key)`.execute(h.db);
    await sql`insert into pausa select from generate_series(1, 2000)`.execute(h.db);
  });
  afterAll(() => h?.close());

  it('runs without a pause while the service has no other request', async () => {
    const alone = await exportOf('sales/sola.ndjson.gz', 1);
    expect(alone.pauses).toEqual([]);
    expect(alone.written.objetos).toBe(2_000);
  });

  it('pauses after its batches, each for the multiple of the batch’s time, while requests are answered, and writes the same file', async () => {
    const beside = await whileRequested(() => exportOf('sales/acompanada.ndjson.gz', 2));
    const unpaced = await exportOf('sales/sin-pausa.ndjson.gz', 0);

    // 20 batches of 100, each read while requests kept coming: each paused twice its time (50 ms at
    // least). The empty range past the last end, read in a moment, pauses only if a request came.
    expect(beside.pauses.filter((ms) => ms >= 100)).toHaveLength(20);
    expect(beside.pauses.length).toBeLessThanOrEqual(21);
    expect(unpaced.pauses).toEqual([]);
    expect(beside.lines).toEqual(unpaced.lines);
    expect(beside.written.objetos).toBe(2_000);
  });

  it('has two readers pause three times their batch’s time for 1, so that together they read half the time one would', async () => {
    const two = await whileRequested(() => exportOf('sales/dos-lectores.ndjson.gz', 1, 2));
    expect(two.pauses.filter((ms) => ms >= 150)).toHaveLength(20);
    expect(two.pauses.length).toBeLessThanOrEqual(21);
    expect(two.lines).toEqual((await exportOf('sales/un-lector.ndjson.gz', 0)).lines);
  });
});
