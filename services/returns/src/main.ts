import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments pg and http before they load
import { loadConfig, runService } from '@erp/runtime';
import { ReturnsConfig } from './config';
import { returnsService } from './service';

runService(returnsService(loadConfig(ReturnsConfig)), { beforeExit: stopTelemetry });
