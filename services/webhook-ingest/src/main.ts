import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments pg and http before they load
import { loadConfig, runService } from '@erp/runtime';
import { WebhookIngestConfig } from './config';
import { webhookIngestService } from './service';

runService(webhookIngestService(loadConfig(WebhookIngestConfig)), { beforeExit: stopTelemetry });
