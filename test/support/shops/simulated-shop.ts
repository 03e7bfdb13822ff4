import { WebhookSender, type DeliveryAttempt, type Outgoing, type WebhookFaults } from './deliveries';
import type { SimResponse } from './https';
import { emptyMetrics, injected, type InjectedFailure, type ShopMetrics, type StockWrite } from './common';

/**
 * What both simulated shops share: the clock a test moves, the webhook sender and its faults, the
 * injected API failures, the metrics and the stock writes received.
 */
export abstract class SimulatedShop {
  readonly metrics: ShopMetrics = emptyMetrics();
  readonly stockWrites: StockWrite[] = [];
  protected readonly sender: WebhookSender;
  private failure: InjectedFailure | null = null;
  private clockOffsetMs = 0;

  protected constructor(platform: 'woocommerce' | 'shopify', faults: WebhookFaults | undefined) {
    this.sender = new WebhookSender(platform, (out, attempt) => this.afterDelivery(out, attempt));
    if (faults) this.sender.setFaults(faults);
  }

  /** The platform's rule after each delivery attempt: when to try again (null: never). */
  protected abstract afterDelivery(out: Outgoing, attempt: DeliveryAttempt): number | null;

  /** Moves the shop's clock forward (changes made after it carry later times). */
  advanceClock(ms: number): void {
    this.clockOffsetMs += ms;
  }

  setFaults(faults: WebhookFaults): void {
    this.sender.setFaults(faults);
  }

  holdWebhooks(): void {
    this.sender.hold();
  }

  releaseWebhooks(order?: 'fifo' | 'reverse' | 'shuffle'): void {
    this.sender.release(order);
  }

  /** Every delivery attempt made, and the events dropped by the faults. */
  get deliveries(): DeliveryAttempt[] {
    return this.sender.attempts;
  }

  get dropped(): Outgoing[] {
    return this.sender.dropped;
  }

  /** Waits until no webhook is in flight. */
  settled(): Promise<void> {
    return this.sender.settled();
  }

  /** The next `count` API requests answer `status` (429 with `Retry-After` by default). */
  failNext(failure: InjectedFailure): void {
    this.failure = { ...failure };
  }

  /** The answer of an injected failure, when one is due. */
  protected injectedFailure(): SimResponse | null {
    return injected(this.failure, this.metrics);
  }

  /** Both platforms keep times to the second; the shop's clock runs `advanceClock` ahead of the machine's. */
  protected now(): Date {
    return new Date(Math.floor((Date.now() + this.clockOffsetMs) / 1000) * 1000);
  }
}
