import { BaseConfig } from '@erp/runtime';

export const PackagesConfig = BaseConfig;
export type PackagesConfig = BaseConfig;
