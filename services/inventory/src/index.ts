export { inventoryService } from './service';
export { INVENTORY_SCHEMA } from './db/tables';
export { InventoryConfig, INVENTORY_DEFAULTS } from './config';
export { migrations as inventoryMigrations } from './db/migrations';
