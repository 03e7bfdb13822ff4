import { BaseConfig } from '@erp/runtime';

export const InventoryConfig = BaseConfig;
export type InventoryConfig = BaseConfig;
