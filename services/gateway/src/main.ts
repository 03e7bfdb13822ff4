import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments http, express, pg and ioredis before they load
import { loadConfig, runService } from '@erp/runtime';
import { GatewayConfig } from './config';
import { gatewayService } from './service';

runService(gatewayService(loadConfig(GatewayConfig)), { beforeExit: stopTelemetry });
