import type { Migrations } from '@erp/db';
import * as m0001 from './0001-outbox';
import * as m0002 from './0002-paquetes';
import * as m0003 from './0003-outbox-orden';

/** Ordered by name; never rename or edit a migration that has shipped. */
export const migrations: Migrations = {
  '0001-outbox': m0001,
  '0002-paquetes': m0002,
  '0003-outbox-orden': m0003,
};
