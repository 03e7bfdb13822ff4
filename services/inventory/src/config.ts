import { z } from 'zod';
import { BaseConfig, configDefaults } from '@erp/runtime';

/** The inventory's own keys; each default is written here only. */
const inventoryKeys = {
  /** A reservation still `reservada` this long after it was taken is checked with its origin. */
  RESERVATION_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /** How often the sweeper looks for such reservations. */
  RESERVATION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).default(10_000),
  /** How long the sweeper waits for the origin's answer before leaving the reservation for later. */
  RESERVATION_CHECK_TIMEOUT_MS: z.coerce.number().int().min(50).default(2_000),
  /** Stock entries moved in or out of their products per transaction when a place is (de)activated. */
  LOCATION_COUNT_BATCH: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
};

export const InventoryConfig = BaseConfig.extend(inventoryKeys);
export type InventoryConfig = z.output<typeof InventoryConfig>;

/** Defaults of the inventory's own keys, also used when the service is given a plain BaseConfig. */
export const INVENTORY_DEFAULTS = configDefaults(inventoryKeys);

/** A BaseConfig (as the test stack builds it) or a full InventoryConfig: missing keys take their defaults. */
export type InventoryConfigInput = BaseConfig & Partial<Omit<InventoryConfig, keyof BaseConfig>>;

export function withInventoryDefaults(config: Readonly<InventoryConfigInput>): Readonly<InventoryConfig> {
  return Object.freeze({ ...INVENTORY_DEFAULTS, ...config });
}
