import type { ServiceSpec } from '@erp/runtime';
import type { ReturnsConfig } from './config';
import { migrations } from './db/migrations';

export const RETURNS_SCHEMA = 'returns';

export function returnsService(config: Readonly<ReturnsConfig>): ServiceSpec<ReturnsConfig> {
  return {
    name: 'returns',
    schema: RETURNS_SCHEMA,
    migrations,
    config,
    async setup() {
      // Subjects of this service are registered here as its capabilities land.
    },
  };
}
