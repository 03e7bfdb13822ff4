import type { ServiceSpec } from '@erp/runtime';
import type { WebhookIngestConfig } from './config';
import { migrations } from './db/migrations';

export const WEBHOOK_INGEST_SCHEMA = 'webhook_ingest';

export function webhookIngestService(config: Readonly<WebhookIngestConfig>): ServiceSpec<WebhookIngestConfig> {
  return {
    name: 'webhook-ingest',
    schema: WEBHOOK_INGEST_SCHEMA,
    migrations,
    config,
    async setup() {
      // Subjects of this service are registered here as its capabilities land.
    },
  };
}
