import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments pg and http before they load
import { loadConfig, runService } from '@erp/runtime';
import { ExportsConfig } from './config';
import { exportsService } from './service';

runService(exportsService(loadConfig(ExportsConfig)), { beforeExit: stopTelemetry });
