export { webhookIngestService, WEBHOOK_INGEST_SCHEMA } from './service';
export { WebhookIngestConfig } from './config';
export { migrations as webhookIngestMigrations } from './db/migrations';
