export { webhookIngestService, type WebhookIngestOptions } from './service';
export { WEBHOOK_INGEST_SCHEMA } from './db/tables';
export { WebhookIngestConfig } from './config';
export { migrations as webhookIngestMigrations } from './db/migrations';
export { signBody } from './domain/signature';
export type { CatalogPort, InventoryPort } from './ports/inventory.port';
export { busSales, type CreateVentaInput, type VentasPort } from './ports/sales.port';
export type { ReturnsPort } from './ports/returns.port';
export type { ProcessingDeps } from './flows/process-pedido.flow';
