import type { ServiceSpec } from '@erp/runtime';
import type { SalesConfig } from './config';
import { migrations } from './db/migrations';

export const SALES_SCHEMA = 'sales';

export function salesService(config: Readonly<SalesConfig>): ServiceSpec<SalesConfig> {
  return {
    name: 'sales',
    schema: SALES_SCHEMA,
    migrations,
    config,
    async setup() {
      // Subjects of this service are registered here as its capabilities land.
    },
  };
}
