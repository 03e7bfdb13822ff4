import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments pg and http before they load
import { loadConfig, runService } from '@erp/runtime';
import { SalesConfig } from './config';
import { salesService } from './service';

runService(salesService(loadConfig(SalesConfig)), { beforeExit: stopTelemetry });
