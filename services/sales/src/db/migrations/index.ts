import type { Migrations } from '@erp/db';
import * as m0001 from './0001-outbox';
import * as m0002 from './0002-sales';
import * as m0003 from './0003-sale-revisions';
import * as m0004 from './0004-returned-amount';
import * as m0005 from './0005-daily-summary';
import * as m0006 from './0006-return-registrations';
import * as m0007 from './0007-change-xid';
import * as m0008 from './0008-correlativo-index-only';
import * as m0009 from './0009-cliente-email-index';
import * as m0010 from './0010-cliente-numero-documento';
import * as m0011 from './0011-revision-intents';
import * as m0012 from './0012-venta-huella';
import * as m0013 from './0013-outbox-orden';

/** Ordered by name; never rename or edit a migration that has shipped. */
export const migrations: Migrations = {
  '0001-outbox': m0001,
  '0002-sales': m0002,
  '0003-sale-revisions': m0003,
  '0004-returned-amount': m0004,
  '0005-daily-summary': m0005,
  '0006-return-registrations': m0006,
  '0007-change-xid': m0007,
  '0008-correlativo-index-only': m0008,
  '0009-cliente-email-index': m0009,
  '0010-cliente-numero-documento': m0010,
  '0011-revision-intents': m0011,
  '0012-venta-huella': m0012,
  '0013-outbox-orden': m0013,
};
