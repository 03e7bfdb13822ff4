import { stopTelemetry } from '@erp/runtime/telemetry'; // first: instruments pg and http before they load
import { loadConfig, runService } from '@erp/runtime';
import { InventoryConfig } from './config';
import { inventoryService } from './service';

runService(inventoryService(loadConfig(InventoryConfig)), { beforeExit: stopTelemetry });
