import { BaseConfig } from '@erp/runtime';

export const SalesConfig = BaseConfig;
export type SalesConfig = BaseConfig;
