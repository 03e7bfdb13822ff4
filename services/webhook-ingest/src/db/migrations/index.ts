import type { Migrations } from '@erp/db';
import * as m0001 from './0001-outbox';
import * as m0002 from './0002-webhooks';
import * as m0003 from './0003-platform-orders';
import * as m0004 from './0004-requeue';
import * as m0005 from './0005-outbox-orden';
import * as m0006 from './0006-shops';
import * as m0007 from './0007-stock-push';
import * as m0008 from './0008-refund-lines';

/** Ordered by name; never rename or edit a migration that has shipped. */
export const migrations: Migrations = {
  '0001-outbox': m0001,
  '0002-webhooks': m0002,
  '0003-platform-orders': m0003,
  '0004-requeue': m0004,
  '0005-outbox-orden': m0005,
  '0006-shops': m0006,
  '0007-stock-push': m0007,
  '0008-refund-lines': m0008,
};
