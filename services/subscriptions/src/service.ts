import type { Kysely } from 'kysely';
import { subscriptionsSubjects } from '@erp/contracts';
import type { ServiceSpec } from '@erp/runtime';
import { withSubscriptionsDefaults, type SubscriptionsConfig, type SubscriptionsConfigInput } from './config';
import { startSourceEventsConsumer } from './consumers/source-events.consumer';
import { migrations } from './db/migrations';
import { SUBSCRIPTIONS_SCHEMA, type SubscriptionsDb } from './db/tables';
import { Dispatcher } from './flows/dispatch.flow';
import { subscriptionHandlers } from './handlers/subscription.handlers';

export { SUBSCRIPTIONS_SCHEMA };

export function subscriptionsService(input: Readonly<SubscriptionsConfigInput>): ServiceSpec<SubscriptionsConfig> {
  const config = withSubscriptionsDefaults(input);
  return {
    name: 'subscriptions',
    schema: SUBSCRIPTIONS_SCHEMA,
    migrations,
    config,
    async setup({ db: anyDb, bus, logger, onShutdown }) {
      const db = anyDb as Kysely<SubscriptionsDb>;
      bus.serve(subscriptionsSubjects, subscriptionHandlers(db, config), { queue: 'subscriptions' });
      const dispatcher = new Dispatcher({ db, config, logger: logger.child({ component: 'dispatcher' }) });
      await startSourceEventsConsumer(db, bus, () => dispatcher.nudge());
      dispatcher.start();
      onShutdown('dispatcher', () => dispatcher.stop());
    },
  };
}
