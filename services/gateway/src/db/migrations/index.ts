import type { Migrations } from '@erp/db';
import * as m0001 from './0001-credentials';
import * as m0002 from './0002-idempotencia';
import * as m0003 from './0003-outbox-orden';
import * as m0004 from './0004-api-key-scopes';

/** Ordered by name; never rename or edit a migration that has shipped. */
export const migrations: Migrations = {
  '0001-credentials': m0001,
  '0002-idempotencia': m0002,
  '0003-outbox-orden': m0003,
  '0004-api-key-scopes': m0004,
};
