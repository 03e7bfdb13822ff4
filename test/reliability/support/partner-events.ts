import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { InvariantResult } from '@erp/back-office';
import type { Company, CompanyRef } from './fixture';
import { call } from './http';
import type { LoadLedger } from './load';
import { sleep } from './wait';

interface PartnerEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

interface Delivery {
  webhookId: string;
  event: PartnerEvent;
}

/**
 * The resource an event is about, for the order promised per resource (undefined: not judged). A
 * product's stock changes are delivered in the events stream's order, which the feed's listing may
 * not follow when its log records them late (a redelivery): judged against the feed, they are left
 * out, as `GET /events` exposes no other order to judge them by.
 */
function resourceOf(event: PartnerEvent): string | undefined {
  const [kind] = event.type.split('.');
  if (kind === 'sale' || kind === 'return') return `${kind}:${String(event.data.id)}`;
  return undefined;
}

/**
 * A partner's receiver on loopback, subscribed to every event of each company: it checks each
 * delivery's Standard Webhooks signature with the reference library, answers 204 at once, and
 * keeps what arrived, in arrival order, per company.
 */
export class EventReceiver {
  private readonly secrets = new Map<CompanyRef, Webhook>();
  /** When each company's subscription was made: it receives the events from then on. */
  readonly since = new Map<CompanyRef, number>();
  readonly arrivals = new Map<CompanyRef, Delivery[]>();
  readonly badSignatures: string[] = [];
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<EventReceiver> {
    const server = http.createServer();
    const receiver = new EventReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(receiver.receive(req, Buffer.concat(chunks).toString('utf8')) ? 204 : 400).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** Subscribes the company to every event type, delivered here. */
  async subscribe(gateway: string, ref: CompanyRef, company: Company): Promise<void> {
    const { port } = this.server.address() as AddressInfo;
    const res = await call(`${gateway}/api/external/v1/event-subscriptions`, {
      method: 'POST',
      key: company.key,
      json: { url: `http://127.0.0.1:${port}/${ref}`, events: ['*'], descripcion: 'chaos receiver' },
    });
    if (res.status !== 201) throw new Error(`subscribing ${ref} answered ${res.status}: ${res.text.slice(0, 200)}`);
    this.secrets.set(ref, new Webhook(res.body.data.secret as string));
    this.since.set(ref, Date.parse(res.body.data.created_at as string));
    this.arrivals.set(ref, []);
  }

  private receive(req: http.IncomingMessage, body: string): boolean {
    const ref = (req.url ?? '').slice(1) as CompanyRef;
    const webhook = this.secrets.get(ref);
    const headers = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    try {
      if (!webhook) throw new Error(`no subscription at ${req.url}`);
      const event = webhook.verify(body, headers) as PartnerEvent;
      this.arrivals.get(ref)!.push({ webhookId: headers['webhook-id'], event });
      return true;
    } catch (err) {
      this.badSignatures.push(`${req.url} ${headers['webhook-id']}: ${(err as Error).message}`);
      return false;
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * The company's log read through `GET /events`, oldest first, from after the event `after` (from
 * the start without it). The feed pages by position and positions commit in order, so reading on
 * from the last event seen never passes over one that commits later.
 */
async function eventLog(gateway: string, company: Company, after?: string): Promise<PartnerEvent[]> {
  const events: PartnerEvent[] = [];
  for (;;) {
    const res = await call(`${gateway}/api/external/v1/events?per_page=500${after ? `&after=${after}` : ''}`, { key: company.key });
    if (res.status !== 200) throw new Error(`GET /events answered ${res.status}`);
    events.push(...(res.body.data as PartnerEvent[]));
    if (!res.body.pagination.has_more) return events;
    after = res.body.pagination.next_after as string;
  }
}

/**
 * What an event stands for, as `type:id` keys: its resource's id (`data.id`), or for an import
 * each package it created. Counted as the log is read, so judging thousands of writes stays cheap.
 */
const keysOf = (e: PartnerEvent): string[] =>
  e.type === 'package.imported'
    ? (e.data.items as Array<{ id: number }>).map((i) => `${e.type}:${i.id}`)
    : typeof e.data.id === 'number'
      ? [`${e.type}:${e.data.id}`]
      : [];

/** One partner event owed to an acknowledged write: what it is, how many the log holds, and when the write was answered. */
interface Expected {
  ref: CompanyRef;
  what: string;
  /** The key (`keysOf`) of the event it is owed. */
  key: string;
  sentAt?: number;
  ackedAt?: number;
  /** For a package: its id, to name the imports logged around it. */
  packageId?: number;
}

/** Every partner event the ledger's acknowledged writes are owed, for the companies `refs`. */
function expectedEvents(ledger: LoadLedger, refs: readonly CompanyRef[]): Expected[] {
  const expected: Expected[] = [];
  for (const ref of refs) {
    for (const s of ledger.sales.values()) {
      if (s.empresa !== ref || !s.acked || s.id === undefined) continue;
      const id = s.id;
      expected.push({
        ref,
        what: `sale ${id}: sale.created`,
        key: `sale.created:${id}`,
        sentAt: s.sentAt,
        ackedAt: s.ackedAt,
      });
      if (s.expected?.estado === 'Anulada' && !s.uncertain)
        expected.push({ ref, what: `sale ${id}: sale.annulled`, key: `sale.annulled:${id}`, ackedAt: s.changedAt });
    }
    for (const r of ledger.returns.values()) {
      if (r.empresa !== ref || !r.acked || r.id === undefined) continue;
      const id = r.id;
      expected.push({
        ref,
        what: `return ${id}: return.created`,
        key: `return.created:${id}`,
        sentAt: r.sentAt,
        ackedAt: r.ackedAt,
      });
    }
    for (const p of ledger.packages.values()) {
      if (p.empresa !== ref || !p.acked || p.id === undefined) continue;
      const id = p.id;
      expected.push({
        ref,
        what: `package ${id}: package.imported`,
        key: `package.imported:${id}`,
        sentAt: p.sentAt,
        ackedAt: p.ackedAt,
        packageId: id,
      });
    }
  }
  return expected;
}

const at = (ms: number | undefined) => (ms === undefined ? 'unknown' : new Date(ms).toISOString());

/**
 * Why an owed event is judged missing or repeated: when its write was sent and answered, how long
 * the check waited for it, and for a package the imports logged just before and after its id (when
 * they happened says whether the log went on past it).
 */
function evidence(e: Expected, log: PartnerEvent[], n: number, waitedMs: number): string {
  const parts = [`${e.ref} ${e.what} in the log ${n} times`, `sent ${at(e.sentAt)}, acknowledged ${at(e.ackedAt)}`];
  if (n === 0) parts.push(`still absent ${(waitedMs / 1000).toFixed(0)} s after the check began`);
  if (e.packageId !== undefined) {
    const imports = log.filter((ev) => ev.type === 'package.imported');
    const ids = (ev: PartnerEvent) => (ev.data.items as Array<{ id: number }>).map((i) => i.id);
    const before = imports.filter((ev) => ids(ev).some((i) => i < e.packageId!)).at(-1);
    const after = imports.find((ev) => ids(ev).some((i) => i > e.packageId!));
    const describe = (ev: PartnerEvent | undefined) => (ev ? `${ev.id} (packages ${ids(ev).join(', ')}) at ${ev.timestamp}` : 'none');
    parts.push(`import logged before it: ${describe(before)}; after it: ${describe(after)}`);
  }
  return parts.join('; ');
}

/**
 * Partner events among the guarantees (DESIGN §3.13): each acknowledged sale, annulment, return
 * and package has its event in its company's log exactly once; the receiver got every logged
 * event (retries of one event under one `webhook-id`), in order per resource, correctly signed,
 * and nothing of another company.
 *
 * The outboxes being empty (the settle before this check) does not mean the log is complete: an
 * event published during a fault may still be in the event log consumer's retries (its backoff
 * reaches a minute, an unacknowledged delivery comes back after the 30 s ack wait). So the check
 * reads the log on from where it was until it holds an event for every acknowledged write, for at
 * most `timeoutMs`, and only then judges; then it waits for the deliveries, reading on the log
 * meanwhile, for at most `timeoutMs` more. A write still missing is reported with when it was sent
 * and acknowledged and how long it was waited for.
 */
export async function checkPartnerEvents(
  receiver: EventReceiver,
  gateway: string,
  ledger: LoadLedger,
  companies: Record<CompanyRef, Company>,
  timeoutMs = 150_000,
): Promise<InvariantResult[]> {
  const refs = [...receiver.arrivals.keys()];
  const began = Date.now();
  const logs = new Map<CompanyRef, PartnerEvent[]>(refs.map((ref) => [ref, []]));
  const counts = new Map<CompanyRef, Map<string, number>>(refs.map((ref) => [ref, new Map()]));
  const readOn = async () => {
    for (const ref of refs) {
      const log = logs.get(ref)!;
      const count = counts.get(ref)!;
      for (const e of await eventLog(gateway, companies[ref], log.at(-1)?.id)) {
        log.push(e);
        for (const key of keysOf(e)) count.set(key, (count.get(key) ?? 0) + 1);
      }
    }
  };
  const countOf = (e: Expected) => counts.get(e.ref)!.get(e.key) ?? 0;
  const expected = expectedEvents(ledger, refs);
  await readOn();
  const absent = () => expected.filter((e) => countOf(e) === 0);
  for (const deadline = began + timeoutMs; absent().length > 0 && Date.now() < deadline;) {
    await sleep(1_000);
    await readOn();
  }
  const waitedMs = Date.now() - began;
  const inLog: string[] = [];
  for (const e of expected) {
    const n = countOf(e);
    if (n !== 1) inLog.push(evidence(e, logs.get(e.ref)!, n, waitedMs));
  }

  // Each company's whole log; a subscription is owed its events from its creation on.
  const owed = (ref: CompanyRef) => logs.get(ref)!.filter((e) => Date.parse(e.timestamp) >= receiver.since.get(ref)!);
  const missing = (ref: CompanyRef) => {
    const got = new Set(receiver.arrivals.get(ref)!.map((d) => d.event.id));
    return owed(ref).filter((e) => !got.has(e.id));
  };
  for (const deadline = Date.now() + timeoutMs; refs.some((ref) => missing(ref).length > 0) && Date.now() < deadline;) {
    await sleep(1_000);
    await readOn();
  }

  const delivered: string[] = [];
  const ordered: string[] = [];
  const own: string[] = [];
  let received = 0;
  for (const ref of refs) {
    const log = logs.get(ref)!;
    const position = new Map(log.map((e, i) => [e.id, i]));
    for (const e of missing(ref).slice(0, 20)) delivered.push(`${ref}: ${e.type} ${e.id} logged at ${e.timestamp}, never delivered`);
    const others = new Set(refs.filter((o) => o !== ref).flatMap((o) => logs.get(o)!.map((e) => e.id)));
    const lastOf = new Map<string, number>();
    const seen = new Set<string>();
    for (const { webhookId, event } of receiver.arrivals.get(ref)!) {
      received++;
      if (webhookId !== event.id) delivered.push(`${ref}: event ${event.id} delivered as webhook-id ${webhookId}`);
      if (others.has(event.id) || !position.has(event.id)) own.push(`${ref}: received ${event.type} ${event.id}, not in its log`);
      // Order per resource: the first delivery of each event comes after the first of every earlier event of its resource.
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      const resource = resourceOf(event);
      const at = position.get(event.id);
      if (resource === undefined || at === undefined) continue;
      if ((lastOf.get(resource) ?? -1) > at) ordered.push(`${ref} ${resource}: ${event.type} ${event.id} delivered after a later event`);
      lastOf.set(resource, Math.max(lastOf.get(resource) ?? -1, at));
    }
  }
  const total = refs.reduce((n, ref) => n + owed(ref).length, 0);
  return [
    {
      name: 'partner events: each acknowledged sale, annulment, return and package is in its company’s log once',
      checked: expected.length,
      violations: inLog,
      ms: waitedMs,
    },
    { name: 'partner events: every logged event delivered, under its own id as webhook-id', checked: total, violations: delivered },
    { name: 'partner events: delivered in order per resource', checked: received, violations: ordered.slice(0, 50) },
    {
      name: 'partner events: every delivery correctly signed, and only of its own company',
      checked: received,
      violations: [...receiver.badSignatures.slice(0, 20), ...own.slice(0, 20)],
    },
  ];
}
