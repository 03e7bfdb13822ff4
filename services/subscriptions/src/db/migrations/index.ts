import type { Migrations } from '@erp/db';
import * as m0001 from './0001-outbox';
import * as m0002 from './0002-subscriptions';
import * as m0003 from './0003-dispatch-lanes-and-rotation';
import * as m0004 from './0004-outbox-orden';
import * as m0005 from './0005-eventos-recibidos';

/** Ordered by name; never rename or edit a migration that has shipped. */
export const migrations: Migrations = {
  '0001-outbox': m0001,
  '0002-subscriptions': m0002,
  '0003-dispatch-lanes-and-rotation': m0003,
  '0004-outbox-orden': m0004,
  '0005-eventos-recibidos': m0005,
};
