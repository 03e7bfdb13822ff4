import { BaseConfig } from '@erp/runtime';

export const ReturnsConfig = BaseConfig;
export type ReturnsConfig = BaseConfig;
