import type { Handlers } from '@erp/bus';
import type { webhookApiSubjects } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { integrationStates } from '../db/conciliacion.repository';
import type { WebhookDb } from '../db/tables';

/** Days over which `GET /integrations` measures the share of orders whose webhook never came. */
export const MISS_RATE_DAYS = 7;

/** The partner API's reads of the company's integrations: never a token, secret or credential. */
export function integrationsHandlers(db: Kysely<WebhookDb>): Handlers<typeof webhookApiSubjects> {
  return {
    'webhooks.integration.list': async (_req, ctx) => integrationStates(db, ctx.empresa.id, MISS_RATE_DAYS),
  };
}
