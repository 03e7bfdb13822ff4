import { runMigrations } from '@erp/runtime';
import { SUBSCRIPTIONS_SCHEMA } from './service';
import { migrations } from './db/migrations';

runMigrations(SUBSCRIPTIONS_SCHEMA, migrations);
