import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments pg and http before they load
import { loadConfig, runService } from '@erp/runtime';
import { SubscriptionsConfig } from './config';
import { subscriptionsService } from './service';

runService(subscriptionsService(loadConfig(SubscriptionsConfig)), { beforeExit: stopTelemetry });
