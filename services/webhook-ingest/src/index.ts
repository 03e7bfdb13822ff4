export { webhookIngestService, type WebhookIngestOptions } from './service';
export { WEBHOOK_INGEST_SCHEMA } from './db/tables';
export { WebhookIngestConfig } from './config';
export { migrations as webhookIngestMigrations } from './db/migrations';
export { signBody } from './domain/signature';
export type { CatalogPort, SalesPort, CreateSaleInput, InventoryPort, ReturnsPort } from './flows/ports';
export type { ProcessingDeps } from './flows/process-order.flow';
