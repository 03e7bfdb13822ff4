import { inventorySubjects } from '@erp/contracts';
import type { ServiceSpec } from '@erp/runtime';
import type { Kysely } from 'kysely';
import type { InventoryConfig } from './config';
import { migrations } from './db/migrations';
import type { InventoryDb } from './db/tables';
import { getProductHandler } from './handlers/get-product.handler';
import { inventorySummaryHandler } from './handlers/inventory-summary.handler';
import { listProductsHandler } from './handlers/list-products.handler';
import { resolveSucursalHandler } from './handlers/resolve-sucursal.handler';
import { seedHandler } from './handlers/seed.handler';

export const INVENTORY_SCHEMA = 'inventory';

export function inventoryService(config: Readonly<InventoryConfig>): ServiceSpec<InventoryConfig> {
  return {
    name: 'inventory',
    schema: INVENTORY_SCHEMA,
    migrations,
    config,
    async setup({ db: anyDb, bus }) {
      const db = anyDb as Kysely<InventoryDb>;
      bus.serve(
        inventorySubjects,
        {
          'inventory.product.get': getProductHandler(db),
          'inventory.product.list': listProductsHandler(db),
          'inventory.summary': inventorySummaryHandler(db),
          'inventory.sucursal.resolve': resolveSucursalHandler(db),
          'inventory.admin.seed': seedHandler(db),
        },
        { queue: 'inventory' },
      );
    },
  };
}
