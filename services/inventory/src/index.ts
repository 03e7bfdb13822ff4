export { inventoryService, INVENTORY_SCHEMA } from './service';
export { InventoryConfig } from './config';
export { migrations as inventoryMigrations } from './db/migrations';
