export { subscriptionsService, SUBSCRIPTIONS_SCHEMA } from './service';
export { SubscriptionsConfig } from './config';
export { migrations as subscriptionsMigrations } from './db/migrations';
