import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { InvariantResult } from '@erp/admin';
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

/** Every event of the company's log, oldest first, read through `GET /events`. */
async function eventLog(gateway: string, company: Company): Promise<PartnerEvent[]> {
  const events: PartnerEvent[] = [];
  let after: string | null | undefined;
  for (;;) {
    const res = await call(`${gateway}/api/external/v1/events?per_page=500${after ? `&after=${after}` : ''}`, { key: company.key });
    if (res.status !== 200) throw new Error(`GET /events answered ${res.status}`);
    events.push(...(res.body.data as PartnerEvent[]));
    if (!res.body.pagination.has_more) return events;
    after = res.body.pagination.next_after as string;
  }
}

/** How many events of `log` match, by type and `data.id`. */
const countOf = (log: PartnerEvent[], type: string, id: number) => log.filter((e) => e.type === type && e.data.id === id).length;

/**
 * Partner events among the guarantees (DESIGN §3.13): each acknowledged sale, annulment, return
 * and package has its event in its company's log exactly once; the receiver got every logged
 * event (retries of one event under one `webhook-id`), in order per resource, correctly signed,
 * and nothing of another company. Waits up to `timeoutMs` for the deliveries to catch up.
 */
export async function checkPartnerEvents(
  receiver: EventReceiver,
  gateway: string,
  ledger: LoadLedger,
  companies: Record<CompanyRef, Company>,
  timeoutMs = 150_000,
): Promise<InvariantResult[]> {
  const refs = [...receiver.arrivals.keys()];
  const logs = new Map<CompanyRef, PartnerEvent[]>();
  // Each company's whole log; a subscription is owed its events from its creation on.
  const owed = new Map<CompanyRef, PartnerEvent[]>();
  for (const ref of refs) {
    logs.set(ref, await eventLog(gateway, companies[ref]));
    owed.set(
      ref,
      logs.get(ref)!.filter((e) => Date.parse(e.timestamp) >= receiver.since.get(ref)!),
    );
  }
  const missing = (ref: CompanyRef) => {
    const got = new Set(receiver.arrivals.get(ref)!.map((d) => d.event.id));
    return owed.get(ref)!.filter((e) => !got.has(e.id));
  };
  for (const deadline = Date.now() + timeoutMs; refs.some((ref) => missing(ref).length > 0) && Date.now() < deadline;) await sleep(500);

  const inLog: string[] = [];
  let logged = 0;
  for (const ref of refs) {
    const log = logs.get(ref)!;
    for (const s of ledger.sales.values()) {
      if (s.empresa !== ref || !s.acked || s.id === undefined) continue;
      logged++;
      const created = countOf(log, 'sale.created', s.id);
      if (created !== 1) inLog.push(`${ref} sale ${s.id}: ${created} sale.created events`);
      if (s.expected?.estado === 'Anulada' && !s.uncertain && countOf(log, 'sale.annulled', s.id) !== 1)
        inLog.push(`${ref} sale ${s.id}: ${countOf(log, 'sale.annulled', s.id)} sale.annulled events`);
    }
    for (const r of ledger.returns.values()) {
      if (r.empresa !== ref || !r.acked || r.id === undefined) continue;
      logged++;
      if (countOf(log, 'return.created', r.id) !== 1)
        inLog.push(`${ref} return ${r.id}: ${countOf(log, 'return.created', r.id)} return.created events`);
    }
    const imported = log
      .filter((e) => e.type === 'package.imported')
      .flatMap((e) => (e.data.items as Array<{ id: number }>).map((i) => i.id));
    for (const p of ledger.packages.values()) {
      if (p.empresa !== ref || !p.acked || p.id === undefined) continue;
      logged++;
      const n = imported.filter((id) => id === p.id).length;
      if (n !== 1) inLog.push(`${ref} package ${p.id}: in ${n} package.imported events`);
    }
  }

  const delivered: string[] = [];
  const ordered: string[] = [];
  const own: string[] = [];
  let received = 0;
  for (const ref of refs) {
    const log = logs.get(ref)!;
    const position = new Map(log.map((e, i) => [e.id, i]));
    for (const e of missing(ref).slice(0, 20)) delivered.push(`${ref}: ${e.type} ${e.id} logged, never delivered`);
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
  const total = refs.reduce((n, ref) => n + owed.get(ref)!.length, 0);
  return [
    {
      name: 'partner events: each acknowledged sale, annulment, return and package is in its company’s log once',
      checked: logged,
      violations: inLog,
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
