import { loadConfig } from '@erp/runtime';
import { WebhookIngestConfig } from './config';

describe('webhook-ingest configuration', () => {
  it('processes as many deliveries at once as the pool allows while keeping two connections for receiving, at most 8', () => {
    expect(loadConfig(WebhookIngestConfig, {}).WEBHOOK_CONCURRENCY).toBe(8);
    expect(loadConfig(WebhookIngestConfig, { DB_POOL_MAX: '5' }).WEBHOOK_CONCURRENCY).toBe(3);
    expect(loadConfig(WebhookIngestConfig, { DB_POOL_MAX: '2' }).WEBHOOK_CONCURRENCY).toBe(1);
    expect(loadConfig(WebhookIngestConfig, { DB_POOL_MAX: '40' }).WEBHOOK_CONCURRENCY).toBe(8);
  });

  it('takes WEBHOOK_CONCURRENCY as set, and refuses a value out of range', () => {
    expect(loadConfig(WebhookIngestConfig, { DB_POOL_MAX: '5', WEBHOOK_CONCURRENCY: '12' }).WEBHOOK_CONCURRENCY).toBe(12);
    expect(() => loadConfig(WebhookIngestConfig, { WEBHOOK_CONCURRENCY: '0' })).toThrow(/WEBHOOK_CONCURRENCY/);
  });
});
