import { subscriptionsSubjects } from '@erp/contracts';
import { registerOutcomeCounter, registerSnapshotGauges, type ServiceSpec } from '@erp/runtime';
import { withSubscriptionsDefaults, type SubscriptionsConfig, type SubscriptionsConfigInput } from './config';
import { startSourceEventsConsumer } from './consumers/source-events.consumer';
import { entregaBacklog } from './db/entrega.repository';
import { migrations } from './db/migrations';
import { countSuscripcionesByEstado } from './db/suscripcion.repository';
import { SUBSCRIPTIONS_SCHEMA, type SubscriptionsDb } from './db/tables';
import { startDispatcher } from './workers/dispatcher.worker';
import { subscriptionHandlers } from './handlers/subscription.handlers';

export function subscriptionsService(input: Readonly<SubscriptionsConfigInput>): ServiceSpec<SubscriptionsConfig, SubscriptionsDb> {
  const config = withSubscriptionsDefaults(input);
  return {
    name: 'subscriptions',
    schema: SUBSCRIPTIONS_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, logger, addWorker, metrics }) {
      registerSnapshotGauges(
        metrics,
        {
          pending: { name: 'erp_partner_deliveries_pending', help: 'Events owed to enabled partner subscriptions, not delivered yet' },
          oldestAgeSeconds: {
            name: 'erp_partner_oldest_pending_age_seconds',
            help: 'Time since the oldest event still owed to an enabled subscription, or received and not in the log yet, happened (0 when none)',
          },
        },
        () => entregaBacklog(db),
      );
      registerSnapshotGauges(
        metrics,
        {
          subscriptions: { name: 'erp_partner_subscriptions', help: 'Partner subscriptions by state (enabled, disabled)', label: 'state' },
        },
        async () => ({ subscriptions: await countSuscripcionesByEstado(db) }),
      );
      const attempted = registerOutcomeCounter(metrics, {
        name: 'erp_partner_delivery_attempts_total',
        help: 'Attempts to deliver an event to a partner, by outcome (delivered = a 2xx in time, failed)',
        label: 'outcome',
        outcomes: ['delivered', 'failed'],
      });
      bus.serve(subscriptionsSubjects, subscriptionHandlers(db, config), { queue: 'subscriptions' });
      const dispatcher = addWorker(
        'dispatcher',
        startDispatcher({ db, config, logger: logger.child({ component: 'dispatcher' }), onAttempt: attempted }),
      );
      addWorker(
        'event log',
        await startSourceEventsConsumer(db, bus, {
          logger: logger.child({ component: 'event log' }),
          pollMs: config.EVENTS_POLL_MS,
          onOwed: () => dispatcher.nudge(),
        }),
      );
    },
  };
}
