export { packagesService } from './service';
export { PACKAGES_SCHEMA } from './db/tables';
export { PackagesConfig } from './config';
export { migrations as packagesMigrations } from './db/migrations';
