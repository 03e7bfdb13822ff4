import { BaseConfig } from '@erp/runtime';

export const WebhookIngestConfig = BaseConfig;
export type WebhookIngestConfig = BaseConfig;
