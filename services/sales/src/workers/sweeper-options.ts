import type { Kysely } from 'kysely';
import type { Bus, Logger } from '@erp/bus';
import type { SalesDb } from '../db/tables';

/** What a sales sweeper runs with: every `intervalMs`, it squares at most `batchSize` sales whose work has waited `afterMs`. */
export interface SweeperOptions {
  db: Kysely<SalesDb>;
  bus: Bus;
  logger: Logger;
  intervalMs: number;
  /** How long the work must be left pending before the sweeper squares its sale (well past any request's timeout). */
  afterMs: number;
  batchSize?: number;
}
