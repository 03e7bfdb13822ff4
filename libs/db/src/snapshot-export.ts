import { sql, type Expression, type Kysely, type Transaction } from 'kysely';
import { pgErrorKind } from './errors';
import { batchEnds, jsonLineRange } from './json';
import { inTransaction } from './transaction';

/** A run of consecutive lines of an export file: their count, and their text or its UTF-8 bytes, each line ending with a newline. */
export interface LineBatch {
  count: number;
  lines: string | Buffer;
}

/** How an owning service reads an export from one snapshot. */
export interface SnapshotReader<DB> {
  /** The delta-sync cursor of the transaction's snapshot; the first statement, so it takes the snapshot. */
  cursor(trx: Transaction<DB>): Promise<string>;
  /** The export's rows, each its id and the JSON text its GET answers (filters applied, no order). */
  rows(trx: Transaction<DB>): Expression<{ id: number; json: string }>;
}

export interface SnapshotExportOptions {
  /** Rows per batch: a batch is read by one statement and held in memory until written. */
  batchSize?: number;
  /** Transactions reading batches at once, all on the same snapshot (each holds a connection). */
  readers?: number;
  /**
   * An export is background work: while the service answers other requests, its readers pause
   * after each batch so that together they read 1 / (1 + this) of the time one reader would
   * (0: never pause). With 1 an export beside requests runs at about half the speed of one reader
   * and leaves the rest of what it used (the service's thread, Postgres, zlib's threads) to them,
   * however many readers it has; alone it runs at full speed.
   */
  yieldToRequests?: number;
  /** Told of each such pause, in milliseconds (a metric counts them). */
  onPause?: (ms: number) => void;
  /**
   * The service's schema through a read-only endpoint (a replica, `DATABASE_URL_READ`): the export
   * is read from one snapshot of it when it has one without a transaction in flight (see
   * REPLICA_SNAPSHOT_TRIES), and from the primary otherwise or when the replica cannot be reached.
   * Either way the cursor continues delta sync on the primary without a gap or a repeat.
   */
  // The options do not know the service's tables; the replica is the same schema as `db`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  replica?: Kysely<any>;
  /** Told where each export was read from (a metric counts them). */
  onSource?: (source: 'replica' | 'primary') => void;
  /**
   * How many requests the service has begun to handle so far (the bus counts them): a reader
   * pauses after a batch only when this moved meanwhile. Without it an export never pauses.
   */
  requestsReceived?: () => number;
}

/** Where the export's lines go: one file, written from the batches in id order as they come. */
export interface SnapshotFile<F> {
  write(batches: AsyncIterable<LineBatch>): Promise<F>;
}

/**
 * Writes the file of an export from ONE repeatable-read, read-only snapshot: every line is its row
 * as of the same moment, and the cursor continues delta sync from that moment. The batches' ends
 * are read first (ids only); then `readers` transactions read the batches at once, the others
 * importing the first one's snapshot (`pg_export_snapshot`, as `pg_dump --jobs` does), while the
 * file is written in id order (`file`: the caller's store and format). Memory holds a few batches
 * whatever the export's size.
 */
export async function writeSnapshotExport<DB, F extends object>(
  db: Kysely<DB>,
  reader: SnapshotReader<DB>,
  file: SnapshotFile<F>,
  options: SnapshotExportOptions = {},
): Promise<F & { cursor: string }> {
  if (options.replica) {
    try {
      const written = await exportFrom(options.replica as Kysely<DB>, reader, file, options, { onReplica: true });
      if (written) {
        options.onSource?.('replica');
        return written;
      }
    } catch (err) {
      // A replica that is down or being promoted: the primary serves the export.
      if (pgErrorKind(err) !== 'unavailable') throw err;
    }
  }
  const written = await exportFrom(db, reader, file, options, { onReplica: false });
  options.onSource?.('primary');
  return written!;
}

/**
 * How many snapshots an export tries on a replica, each a few milliseconds after the last, for
 * one without a transaction in flight before it reads from the primary instead.
 */
export const REPLICA_SNAPSHOT_TRIES = 20;

/**
 * Whether a replica's snapshot, just taken by the transaction's first statement, has no
 * transaction in flight (xmin = xmax). On a hot standby Postgres keeps the transactions in flight
 * out of the snapshot's `xip` (`pg_current_snapshot()` lists none there), so a hand-over cursor
 * taken from it would pass over whatever was in flight: only a snapshot with none in flight, whose
 * every transaction before xmax is committed or aborted, gives an exact cursor.
 */
async function quietSnapshot<DB>(trx: Transaction<DB>): Promise<boolean> {
  const { rows } = await sql<{ quiet: boolean }>`
    select pg_snapshot_xmin(pg_current_snapshot()) = pg_snapshot_xmax(pg_current_snapshot()) as quiet`.execute(trx);
  return rows[0]!.quiet;
}

/** The export from `source`; on a replica, undefined when no quiet snapshot came within REPLICA_SNAPSHOT_TRIES. */
async function exportFrom<DB, F extends object>(
  source: Kysely<DB>,
  reader: SnapshotReader<DB>,
  file: SnapshotFile<F>,
  options: SnapshotExportOptions,
  where: { onReplica: boolean },
): Promise<(F & { cursor: string }) | undefined> {
  const batchSize = options.batchSize ?? 1_000;
  const readers = Math.max(1, options.readers ?? 1);
  const yieldTo = options.yieldToRequests ?? 0;
  for (let attempt = 1; ; attempt++) {
    const written = await inTransaction(
      source,
      async (trx) => {
        await sql`set transaction read only`.execute(trx);
        // The first statement takes the snapshot; on a replica it must be a quiet one.
        if (where.onReplica && !(await quietSnapshot(trx))) return undefined;
        const cursor = await reader.cursor(trx);
        const ends = await batchEnds(trx, reader.rows(trx), batchSize);
        // (previous end, end]; the last batch runs to the end.
        const ranges = [...ends, null].map((end, i) => ({ afterId: i === 0 ? 0 : ends[i - 1]!, throughId: end }));
        const queue = new BatchQueue(ranges.length, readers + 1);
        const reading = Math.min(readers, ranges.length);
        // Each of n readers busy 1 / (n (1 + yieldTo)) of its time: together, 1 / (1 + yieldTo).
        const pauseFactor = yieldTo > 0 ? reading * (1 + yieldTo) - 1 : 0;
        const read = async (t: Transaction<DB>) => {
          for (let i = queue.take(); i !== undefined; i = queue.take()) {
            // A batch's time runs from here to its end: its wait for the file to catch up included, the pause before it not.
            const started = performance.now();
            const requests = options.requestsReceived?.();
            if (!(await queue.turn(i))) return;
            const { afterId, throughId } = ranges[i]!;
            queue.resolve(i, await jsonLineRange(t, reader.rows(t), afterId, throughId));
            if (pauseFactor > 0 && options.requestsReceived?.() !== requests) {
              const ms = (performance.now() - started) * pauseFactor;
              options.onPause?.(ms);
              await queue.pause(ms);
            }
          }
        };
        const others = async (snapshot: string) =>
          inTransaction(
            source,
            async (t) => {
              await sql`set transaction read only`.execute(t);
              try {
                await sql`set transaction snapshot ${sql.lit(snapshot)}`.execute(t);
              } catch (err) {
                // Behind a read-only endpoint that balances connections over several replicas this
                // reader may have reached another one, which does not know the snapshot: it leaves
                // the batches to the readers that share it.
                if (where.onReplica && (err as { code?: string }).code === '22023') return;
                throw err;
              }
              await read(t);
            },
            { isolation: 'repeatable read', attempts: 1 },
          );
        let workers: Array<Promise<void>> = [];
        try {
          if (reading > 1) {
            const { rows } = await sql<{ snapshot: string }>`select pg_export_snapshot() as snapshot`.execute(trx);
            if (!/^[0-9A-F-]+$/.test(rows[0]!.snapshot)) throw new Error(`unexpected snapshot id ${rows[0]!.snapshot}`);
            workers = Array.from({ length: reading - 1 }, () => others(rows[0]!.snapshot));
          }
          workers.push(read(trx));
          for (const worker of workers) void worker.catch((err: unknown) => queue.fail(err));
          const batches = async function* () {
            for (let i = 0; i < ranges.length; i++) {
              const batch = await queue.result(i);
              if (batch.count > 0) yield batch;
            }
          };
          return { ...(await file.write(batches())), cursor };
        } finally {
          // The readers stop taking batches, and the snapshot's transactions end before this one does.
          queue.fail(new Error('export ended'));
          await Promise.allSettled(workers);
        }
      },
      { isolation: 'repeatable read' },
    );
    if (written || !where.onReplica || attempt >= REPLICA_SNAPSHOT_TRIES) return written;
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
  }
}

/**
 * The batches of one export, handed out to its readers in order: a reader runs at most `window`
 * batches ahead of the file, and the file takes each batch's lines in order. The first failure
 * (a reader's, or the file's) ends it: no batch is handed out after, and every result rejects.
 */
const TAKEN = { promise: Promise.resolve({ count: 0, lines: '' }), resolve: () => undefined, reject: () => undefined };

class BatchQueue {
  private next = 0;
  private consumed = 0;
  private failed = false;
  private readonly results: Array<{ promise: Promise<LineBatch>; resolve: (b: LineBatch) => void; reject: (e: unknown) => void }>;
  private waiters: Array<() => void> = [];
  private readonly pausing = new Set<() => void>();

  constructor(
    private readonly size: number,
    private readonly window: number,
  ) {
    this.results = Array.from({ length: size }, () => {
      let resolve!: (b: LineBatch) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<LineBatch>((res, rej) => ((resolve = res), (reject = rej)));
      void promise.catch(() => undefined); // read by result() in order, or by no one once the export failed
      return { promise, resolve, reject };
    });
  }

  /** The next batch to read, or undefined once every batch is taken or the export failed. */
  take(): number | undefined {
    return this.failed || this.next >= this.size ? undefined : this.next++;
  }

  /** Waits until batch `i` is within the window ahead of the file; false when the export failed meanwhile. */
  async turn(i: number): Promise<boolean> {
    while (!this.failed && i - this.consumed >= this.window) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return !this.failed;
  }

  /** Waits `ms`, or less when the export fails meanwhile. */
  async pause(ms: number): Promise<void> {
    if (this.failed) return;
    await new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.pausing.delete(end);
        resolve();
      };
      const timer = setTimeout(end, ms);
      this.pausing.add(end);
    });
  }

  resolve(i: number, batch: LineBatch): void {
    this.results[i]!.resolve(batch);
  }

  /** Batch `i`'s lines, once read; the file takes them in order. */
  async result(i: number): Promise<LineBatch> {
    const batch = await this.results[i]!.promise;
    // Handed to the file: this queue no longer holds it (an export's batches would add up to the whole file).
    this.results[i] = TAKEN;
    this.consumed = i + 1;
    this.wake();
    return batch;
  }

  fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    for (const r of this.results) r.reject(err);
    this.wake();
    for (const end of [...this.pausing]) end();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
