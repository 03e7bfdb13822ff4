import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments pg and http before they load
import { loadConfig, runService } from '@erp/runtime';
import { PackagesConfig } from './config';
import { packagesService } from './service';

runService(packagesService(loadConfig(PackagesConfig)), { beforeExit: stopTelemetry });
