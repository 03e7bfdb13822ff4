import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { SERVICES, schemaOf } from '@erp/contracts';
import { consumerBacklogs } from '@erp/testing';

/** What was still asynchronous when a scenario was about to start, and how long it took to settle. */
export interface Quiet {
  ms: number;
  /** At the start of the wait: outbox rows unpublished, stream events not yet acknowledged, deliveries owed. */
  before: { outbox: number; consumers: number; webhooks: number; partners: number };
  /** What was left when the wait gave up (all zero when it settled). */
  left: { outbox: number; consumers: number; webhooks: number; partners: number };
}

const POLL_MS = 250;

/**
 * Waits until the previous scenario's asynchronous work has settled, so the next one is measured
 * alone: every service's outbox published, every durable consumer of the streams caught up
 * (nothing pending, nothing unacknowledged), every platform delivery processed and every partner
 * delivery due now sent. Gives up after `timeoutMs` and says what was left.
 */
export async function quiesce(options: { databaseUrl: string; natsUrl: string; prefix: string; timeoutMs: number }): Promise<Quiet> {
  const started = Date.now();
  const db = new pg.Client({ connectionString: options.databaseUrl });
  await db.connect();
  const nc = await connect({ servers: options.natsUrl, name: 'bench-quiesce' });
  try {
    const outboxes = SERVICES.map((s) => `select count(*)::int as n from ${schemaOf(s)}.outbox where published_at is null`).join(
      ' union all ',
    );
    const read = async () => {
      const outbox = (await db.query<{ n: number }>(outboxes)).rows.reduce((sum, r) => sum + r.n, 0);
      const consumers = (await consumerBacklogs(nc, options.prefix)).reduce((sum, c) => sum + c.pending + c.unacknowledged, 0);
      const webhooks = (await db.query<{ n: number }>(`select count(*)::int as n from webhook_ingest.entregas where estado = 'recibida'`))
        .rows[0]!.n;
      const partners = (
        await db.query<{ n: number }>(
          // Received events wait to enter the log (and to be owed) until the event log's consumer has settled every earlier one.
          `select ((select count(*) from subscriptions.entregas where estado = 'pendiente' and proximo_intento_at <= now())
             + (select count(*) from subscriptions.eventos_recibidos))::int as n`,
        )
      ).rows[0]!.n;
      return { outbox, consumers, webhooks, partners };
    };
    const before = await read();
    let left = before;
    while (Object.values(left).some((n) => n > 0) && Date.now() - started < options.timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      left = await read();
    }
    return { ms: Date.now() - started, before, left };
  } finally {
    await db.end();
    await nc.close();
  }
}

/** One line for the report: how long the scenario waited for the previous one's work, and what it was. */
export function quietLine(q: Quiet): string {
  const parts = (x: Quiet['before']) =>
    `${x.outbox} outbox rows, ${x.consumers} events unconsumed, ${x.webhooks} platform deliveries, ${x.partners} partner deliveries due`;
  const settled = Object.values(q.left).every((n) => n === 0);
  return settled
    ? `settled before it in ${(q.ms / 1000).toFixed(1)} s (${parts(q.before)})`
    : `NOT settled before it after ${(q.ms / 1000).toFixed(1)} s: ${parts(q.left)} left`;
}
