export { packagesService, PACKAGES_SCHEMA } from './service';
export { PackagesConfig } from './config';
export { migrations as packagesMigrations } from './db/migrations';
