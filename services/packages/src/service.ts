import type { ServiceSpec } from '@erp/runtime';
import type { PackagesConfig } from './config';
import { migrations } from './db/migrations';

export const PACKAGES_SCHEMA = 'packages';

export function packagesService(config: Readonly<PackagesConfig>): ServiceSpec<PackagesConfig> {
  return {
    name: 'packages',
    schema: PACKAGES_SCHEMA,
    migrations,
    config,
    async setup() {
      // Subjects of this service are registered here as its capabilities land.
    },
  };
}
