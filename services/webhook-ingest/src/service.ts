import type { Kysely } from 'kysely';
import { OutboxRelay } from '@erp/bus';
import { webhookSubjects } from '@erp/contracts';
import type { ServiceSpec } from '@erp/runtime';
import { WEBHOOK_RETRY_BACKOFF_MS, withWebhookIngestDefaults, type WebhookIngestConfig, type WebhookIngestConfigInput } from './config';
import { startDeliveryConsumer } from './consumers/delivery-received.consumer';
import { migrations } from './db/migrations';
import type { WebhookDb } from './db/tables';
import { adminHandlers } from './handlers/admin.handlers';
import { receiveHandler } from './handlers/receive.handler';
import type { ProcessingDeps } from './flows/process-order.flow';
import { busCatalog, busInventory, busReturns, busSales, gatewayContexts } from './flows/ports';

export const WEBHOOK_INGEST_SCHEMA = 'webhook_ingest';

export interface WebhookIngestOptions {
  /** Replaces the services processing talks to (tests). */
  deps?: Partial<ProcessingDeps>;
}

export function webhookIngestService(input: Readonly<WebhookIngestConfigInput>, options: WebhookIngestOptions = {}): ServiceSpec<WebhookIngestConfig> {
  const config = withWebhookIngestDefaults(input);
  return {
    name: 'webhook-ingest',
    schema: WEBHOOK_INGEST_SCHEMA,
    migrations,
    config,
    async setup({ db: anyDb, bus }) {
      const db = anyDb as Kysely<WebhookDb>;
      const relay = new OutboxRelay({ db, bus });
      relay.start();
      const nudge = () => relay.nudge();
      bus.serve(webhookSubjects, { 'webhooks.receive': receiveHandler(db, nudge), ...adminHandlers(db, nudge) }, { queue: 'webhook-ingest' });
      const deps: ProcessingDeps = {
        sales: busSales(bus),
        catalog: busCatalog(bus),
        inventory: busInventory(bus),
        returns: busReturns(bus),
        context: gatewayContexts(bus),
        ...options.deps,
      };
      await startDeliveryConsumer(db, bus, deps, {
        concurrency: config.WEBHOOK_CONCURRENCY,
        backoffMs: WEBHOOK_RETRY_BACKOFF_MS,
        maxDeliver: config.WEBHOOK_MAX_ATTEMPTS,
      });
    },
  };
}
