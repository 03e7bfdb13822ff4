import { webhookSubjects } from '@erp/contracts';
import { BaseConfig, loadConfig } from '@erp/runtime';
import type { Harness } from '@erp/testing';
import type { Bus } from '@erp/bus';
import { webhookIngestService, type WebhookIngestConfig, type WebhookIngestOptions } from '../src';

/**
 * Starts a replica of webhook-ingest on the harness with the pool and timeouts the system tests'
 * stack gives it, `settings` over its defaults and `options` standing in for what processing calls.
 */
export function startWebhookIngest(
  h: Harness<unknown>,
  settings: Partial<Omit<WebhookIngestConfig, keyof BaseConfig>>,
  options: WebhookIngestOptions = {},
) {
  return h.start((env) => webhookIngestService({ ...loadConfig(BaseConfig, env), ...settings }, options), {
    env: { DB_POOL_MAX: '5', REQUEST_TIMEOUT_MS: '15000', VALIDATE_REPLIES: 'true' },
  });
}

/** A delivery as the gateway forwards it on `webhooks.receive`: header names in lower case, the body in base64. */
export function receive(
  bus: Bus,
  plataforma: 'woocommerce' | 'shopify',
  token: string,
  body: string,
  headers: Record<string, string>,
  recurso: 'pedido' | 'producto' = 'pedido',
) {
  return bus.request(
    webhookSubjects,
    'webhooks.receive',
    {
      plataforma,
      recurso,
      token,
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
      cuerpo_base64: Buffer.from(body).toString('base64'),
    },
    { requestId: 'test' },
  );
}
