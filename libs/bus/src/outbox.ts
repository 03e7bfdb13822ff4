import { randomUUID } from 'node:crypto';
import { sql, type Generated, type Kysely, type Transaction } from 'kysely';
import type { EventCatalog, PayloadOf, RequestContext } from '@erp/contracts';
import type { Bus } from './bus';
import { traceCarrier } from './headers';
import { publishEvent } from './jetstream';

/** Tables every service schema gets: the outbox, and the ids of events it has already applied. */
export interface OutboxTables {
  outbox: {
    id: string;
    subject: string;
    payload: unknown;
    context: unknown;
    trace: unknown;
    created_at: Generated<Date>;
    /** Insertion order (`addOutboxOrder`); null on rows written before it. */
    orden: Generated<string | null>;
    published_at: Date | null;
  };
  processed_events: {
    consumer: string;
    event_id: string;
    processed_at: Generated<Date>;
  };
}

// Services type their Kysely with their own tables plus these; the helpers accept any of them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any> | Transaction<any>;
const asOutbox = (db: AnyDb) => db as unknown as Kysely<OutboxTables>;

/** Migration step that creates the outbox tables in the schema the migration runs in. */
export async function createOutboxTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('outbox')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('context', 'jsonb')
    .addColumn('trace', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn('published_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('outbox_pending_idx').on('outbox').column('created_at').where(sql.ref('published_at'), 'is', null).execute();
  await db.schema
    .createTable('processed_events')
    .addColumn('consumer', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('processed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('processed_events_pk', ['consumer', 'event_id'])
    .execute();
}

/**
 * Migration step that numbers the outbox's rows in the order they are inserted: `orden`, from a
 * sequence, on every row written after it (rows already there keep null, so nothing is
 * rewritten). The relay publishes by `created_at`, then `orden`: rows of one statement, stamped
 * with the same or nearly the same `clock_timestamp()`, leave in the order they were written, and
 * so do the statements of one transaction.
 */
export async function addOutboxOrder(db: Kysely<unknown>): Promise<void> {
  await sql`create sequence outbox_orden_seq`.execute(db);
  await sql`alter table outbox add column orden bigint`.execute(db);
  await sql`alter table outbox alter column orden set default nextval('outbox_orden_seq')`.execute(db);
  await sql`alter sequence outbox_orden_seq owned by outbox.orden`.execute(db);
}

/**
 * Records an event in the same transaction as the change it announces; the relay publishes it
 * after commit. Returns the event id (also its JetStream `Nats-Msg-Id`).
 */
export async function enqueueEvent<E extends EventCatalog, S extends keyof E & string>(
  trx: Transaction<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  events: E,
  subject: S,
  payload: PayloadOf<E, S>,
  ctx?: RequestContext,
): Promise<string> {
  const id = randomUUID();
  const checked = events[subject]!.payload.parse(payload);
  await asOutbox(trx)
    .insertInto('outbox')
    .values({
      id,
      subject,
      payload: JSON.stringify(checked),
      context: ctx ? JSON.stringify(ctx) : null,
      trace: JSON.stringify(traceCarrier()),
    })
    .execute();
  return id;
}

/**
 * `enqueueEvent` for many events of one subject, in one statement; their ids in order. The rows
 * are inserted in the order given, so their `orden` follows it and the relay publishes them so.
 */
export async function enqueueEvents<E extends EventCatalog, S extends keyof E & string>(
  trx: Transaction<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  events: E,
  subject: S,
  payloads: ReadonlyArray<PayloadOf<E, S>>,
  ctx?: RequestContext,
): Promise<string[]> {
  if (payloads.length === 0) return [];
  const context = ctx ? JSON.stringify(ctx) : null;
  const trace = JSON.stringify(traceCarrier());
  const rows = payloads.map((payload) => ({
    id: randomUUID(),
    subject,
    payload: JSON.stringify(events[subject]!.payload.parse(payload)),
    context,
    trace,
  }));
  await asOutbox(trx).insertInto('outbox').values(rows).execute();
  return rows.map((r) => r.id);
}

/**
 * Claims an event for a consumer inside the transaction that applies its effect. Returns false
 * when it was already applied: the caller then does nothing (redelivery is normal).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function claimEvent(trx: Transaction<any>, consumer: string, eventId: string): Promise<boolean> {
  const inserted = await asOutbox(trx)
    .insertInto('processed_events')
    .values({ consumer, event_id: eventId })
    .onConflict((oc) => oc.doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Events recorded but not yet published, and how long the oldest has waited (for metrics). */
export async function outboxBacklog(db: AnyDb): Promise<{ pending: number; oldestAgeSeconds: number }> {
  const row = await asOutbox(db)
    .selectFrom('outbox')
    .select([
      sql<number>`count(*)::int`.as('pending'),
      sql<number>`coalesce(extract(epoch from now() - min(created_at)), 0)::float8`.as('oldest'),
    ])
    .where('published_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { pending: row.pending, oldestAgeSeconds: row.oldest };
}

/** What code that writes events is handed to have them published at once: the relay of its schema's outbox, run by the runtime. */
export interface OutboxRelay {
  /** Events were just committed: publish them now instead of at the next poll. */
  nudge(): void;
}

/** Rows a publishing pass claims at a time. */
const PUBLISH_BATCH = 200;

/**
 * Publishes outbox rows to JetStream in commit order, until none is pending; answers how many it
 * published. Several replicas can run it: rows are claimed with `FOR UPDATE SKIP LOCKED`, and a
 * row published twice (crash between publish and mark) is dropped by JetStream's deduplication on
 * its id.
 */
export async function publishOutbox(db: AnyDb, bus: Bus, batchSize = PUBLISH_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await publishBatch(asOutbox(db), bus, batchSize);
    total += n;
    if (n < batchSize) return total;
  }
}

/** Deletes the rows published before `before` (JetStream's dedup window is far shorter than any retention). */
export async function purgeOutbox(db: AnyDb, before: Date): Promise<void> {
  await asOutbox(db).deleteFrom('outbox').where('published_at', '<', before).execute();
}

async function publishBatch(db: Kysely<OutboxTables>, bus: Bus, batchSize: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('outbox')
      .selectAll()
      .where('published_at', 'is', null)
      .orderBy('created_at')
      .orderBy('orden')
      .limit(batchSize)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const row of rows) {
      await publishEvent(bus, row.subject, row.payload, {
        msgId: row.id,
        ctx: (row.context ?? undefined) as RequestContext | undefined,
        trace: (row.trace ?? undefined) as Record<string, string> | undefined,
      });
    }
    if (rows.length > 0) {
      await trx
        .updateTable('outbox')
        .set({ published_at: sql<Date>`now()` })
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
    }
    return rows.length;
  });
}
