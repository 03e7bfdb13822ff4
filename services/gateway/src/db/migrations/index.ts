import type { Migrations } from '@erp/db';
import * as m0001 from './0001-credentials';
import * as m0002 from './0002-idempotencia';

/** Ordered by name; never rename or edit a migration that has shipped. */
export const migrations: Migrations = {
  '0001-credentials': m0001,
  '0002-idempotencia': m0002,
};
