import { Random } from '@erp/testing';

/**
 * How a shop's webhooks misbehave on their way out. Drawn from one seeded generator, so a seed
 * replays the same drops and duplicates for the same sequence of events.
 */
export interface WebhookFaults {
  /** Fraction of events never sent (lost on the way: no attempt, no failure counted). */
  drop?: number;
  /** Fraction of events sent twice (the second a moment after the first, with the same event id). */
  duplicate?: number;
  /** Every send waits this long first. */
  delayMs?: number;
  /** Plus a random wait in [0, jitterMs): concurrent sends then arrive out of order. */
  jitterMs?: number;
  seed?: number;
}

/** One HTTP attempt of a webhook, as the receiving end answered it. */
export interface DeliveryAttempt {
  platform: 'woocommerce' | 'shopify';
  subscriptionId: string;
  topic: string;
  url: string;
  /** The event's own id (Shopify's `X-Shopify-Event-Id`; for WooCommerce the simulator's). */
  eventId: string;
  attempt: number;
  status: number | null;
  error: string | null;
  at: Date;
  body: string;
  headers: Record<string, string>;
}

export interface Outgoing {
  subscriptionId: string;
  topic: string;
  url: string;
  eventId: string;
  body: string;
  /** Headers for one attempt (WooCommerce makes a new delivery id per attempt). */
  headers: (attempt: number) => Record<string, string>;
}

/**
 * Sends a shop's webhooks with the faults asked for, and records every attempt. `hold()` keeps
 * events back until `release()`, which sends them in the order asked (a deterministic reorder).
 */
export class WebhookSender {
  readonly attempts: DeliveryAttempt[] = [];
  readonly dropped: Outgoing[] = [];
  private faults: WebhookFaults = {};
  private random = new Random(1);
  private held: Outgoing[] | null = null;
  private readonly pending = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly platform: 'woocommerce' | 'shopify',
    /** Called after each attempt: the platform's rule counts it, and answers when to try again (null: never). */
    private readonly onResult: (out: Outgoing, attempt: DeliveryAttempt) => number | null,
  ) {}

  setFaults(faults: WebhookFaults): void {
    this.faults = { ...faults };
    this.random = new Random(faults.seed ?? 1);
  }

  hold(): void {
    this.held ??= [];
  }

  /** Sends what was held: in the order of the events, reversed, or shuffled by the seed. */
  release(order: 'fifo' | 'reverse' | 'shuffle' = 'fifo'): void {
    const held = this.held ?? [];
    this.held = null;
    if (order === 'reverse') held.reverse();
    if (order === 'shuffle') {
      for (let i = held.length - 1; i > 0; i--) {
        const j = this.random.int(0, i);
        [held[i], held[j]] = [held[j]!, held[i]!];
      }
    }
    // One after the other, so the receiving end sees them in this order.
    const chain = held.reduce<Promise<unknown>>((p, out) => p.then(() => this.attempt(out, 0)), Promise.resolve());
    this.track(chain);
  }

  send(out: Outgoing): void {
    if (this.closed) return;
    if (this.faults.drop && this.random.chance(this.faults.drop)) {
      this.dropped.push(out);
      return;
    }
    const copies = this.faults.duplicate && this.random.chance(this.faults.duplicate) ? 2 : 1;
    for (let i = 0; i < copies; i++) {
      if (this.held) this.held.push(out);
      else {
        const wait = (this.faults.delayMs ?? 0) + (this.faults.jitterMs ? this.random.next() * this.faults.jitterMs : 0) + i * 5;
        this.track(this.later(wait, () => this.attempt(out, 0)));
      }
    }
  }

  /** Resolves when nothing is in flight or waiting for a retry (held events are not waited for). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  private later(ms: number, fn: () => Promise<void>): Promise<void> {
    return ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)).then(fn) : fn();
  }

  private async attempt(out: Outgoing, n: number): Promise<void> {
    if (this.closed) return;
    const headers = out.headers(n);
    let status: number | null = null;
    let error: string | null = null;
    try {
      // Both platforms give up on an answer after 5 seconds.
      const res = await fetch(out.url, { method: 'POST', headers, body: out.body, redirect: 'manual', signal: AbortSignal.timeout(5000) });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    const record: DeliveryAttempt = {
      platform: this.platform,
      subscriptionId: out.subscriptionId,
      topic: out.topic,
      url: out.url,
      eventId: out.eventId,
      attempt: n,
      status,
      error,
      at: new Date(),
      body: out.body,
      headers,
    };
    this.attempts.push(record);
    const retryIn = this.onResult(out, record);
    if (retryIn !== null) this.track(this.later(retryIn, () => this.attempt(out, n + 1)));
  }
}
