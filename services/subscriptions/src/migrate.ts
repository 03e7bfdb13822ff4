import { runMigrations } from '@erp/runtime';
import { migrations } from './db/migrations';
import { SUBSCRIPTIONS_SCHEMA } from './db/tables';

runMigrations(SUBSCRIPTIONS_SCHEMA, migrations);
