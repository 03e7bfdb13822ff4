import { packagesSubjects } from '@erp/contracts';
import type { ServiceSpec } from '@erp/runtime';
import type { PackagesConfig } from './config';
import { migrations } from './db/migrations';
import { PACKAGES_SCHEMA, type PackagesDb } from './db/tables';
import { importPackagesHandler } from './handlers/import-packages.handler';

export function packagesService(config: Readonly<PackagesConfig>): ServiceSpec<PackagesConfig, PackagesDb> {
  return {
    name: 'packages',
    schema: PACKAGES_SCHEMA,
    migrations,
    config,
    async setup({ db, bus, outbox }) {
      bus.serve(
        packagesSubjects,
        {
          'packages.import': importPackagesHandler(db, bus, () => outbox.nudge()),
        },
        { queue: 'packages' },
      );
    },
  };
}
