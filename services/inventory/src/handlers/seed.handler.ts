import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';
import { seedInventory, type SeedRequest } from '../flows/seed-inventory.flow';

/** Back office: loads a company's branches, warehouses, categories, products and stock at once. */
export function seedHandler(db: Kysely<InventoryDb>) {
  return async (req: SeedRequest) => inTransaction(db, (trx) => seedInventory(trx, req));
}
