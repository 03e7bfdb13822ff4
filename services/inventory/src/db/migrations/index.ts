import type { Migrations } from '@erp/db';
import * as m0001 from './0001-catalog';
import * as m0002 from './0002-list-indexes';
import * as m0003 from './0003-stock-ledger';
import * as m0004 from './0004-inventory-summary';
import * as m0005 from './0005-change-xid';
import * as m0006 from './0006-counted-entries';
import * as m0007 from './0007-product-change-stamp';
import * as m0008 from './0008-reverted-adjustments';
import * as m0009 from './0009-stock-cause';
import * as m0010 from './0010-outbox-orden';

/** Ordered by name; never rename or edit a migration that has shipped. */
export const migrations: Migrations = {
  '0001-catalog': m0001,
  '0002-list-indexes': m0002,
  '0003-stock-ledger': m0003,
  '0004-inventory-summary': m0004,
  '0005-change-xid': m0005,
  '0006-counted-entries': m0006,
  '0007-product-change-stamp': m0007,
  '0008-reverted-adjustments': m0008,
  '0009-stock-cause': m0009,
  '0010-outbox-orden': m0010,
};
