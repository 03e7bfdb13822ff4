export { subscriptionsService } from './service';
export { SUBSCRIPTIONS_SCHEMA } from './db/tables';
export { SubscriptionsConfig } from './config';
export { migrations as subscriptionsMigrations } from './db/migrations';
