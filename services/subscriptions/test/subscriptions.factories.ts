import type { Bus } from '@erp/bus';
import { subscriptionsSubjects } from '@erp/contracts';
import { loadConfig, type RunningService } from '@erp/runtime';
import { harness, tenant, type Harness } from '@erp/testing';
import { SubscriptionsConfig, subscriptionsService } from '../src';
import { TestReceiver } from './receiver';

/** The service's spec from an environment (`Harness.start` gives it the isolation's). */
export const subscriptionsSpec = (env: Record<string, string>) => subscriptionsService(loadConfig(SubscriptionsConfig, env));

/**
 * The subscriptions service in this process on a harness of its own, allowed to deliver to
 * receivers on loopback over http; `timing` sets its retries and timeouts. `settings` is what it
 * was started with beyond the isolation, for starting it again (or in another process).
 */
export async function startSubscriptions(
  label: string,
  timing: Record<string, string>,
): Promise<{ h: Harness<unknown>; settings: Record<string, string>; sut: RunningService<SubscriptionsConfig> }> {
  const settings = { DB_POOL_MAX: '10', EVENTS_ALLOW_PRIVATE_URLS: 'true', EVENTS_ALLOW_HTTP: 'true', ...timing };
  const h = await harness(label, { requestTimeoutMs: 5_000 });
  try {
    return { h, settings, sut: await h.start(subscriptionsSpec, { env: settings }) };
  } catch (err) {
    await h.close();
    throw err;
  }
}

/** A subscription of company `empresa` to `events` (every type by default), as the partner creates it. */
export const subscribe = (bus: Bus, empresa: number, url: string, events: string[] = ['*']) =>
  bus.request(subscriptionsSubjects, 'subscriptions.subscription.create', { url, events } as never, tenant(empresa));

/** A receiver on loopback, stopped when the harness closes. */
export async function startReceiver(h: Harness<unknown>): Promise<TestReceiver> {
  const receiver = await TestReceiver.start();
  h.onClose(() => receiver.stop());
  return receiver;
}
