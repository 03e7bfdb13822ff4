export { inventoryService, INVENTORY_SCHEMA } from './service';
export { InventoryConfig, INVENTORY_DEFAULTS } from './config';
export { migrations as inventoryMigrations } from './db/migrations';
