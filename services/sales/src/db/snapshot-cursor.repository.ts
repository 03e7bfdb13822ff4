import { sql, type Transaction } from 'kysely';
import { encodeChangeCursor } from '@erp/contracts';
import type { SalesDb } from './tables';

/**
 * The delta-sync cursor of the current repeatable-read snapshot: `order_by=updated_at&cursor=`
 * with it answers every sale written by a transaction the snapshot does not see. It starts at the
 * snapshot's xmin (every older transaction is in the snapshot): no change is missed, and a sale
 * written by a transaction between xmin and the snapshot may come again (overlap, never a gap).
 * The one place to swap for an exact cursor of the snapshot.
 */
export async function exportSnapshotCursor(trx: Transaction<SalesDb>): Promise<string> {
  const { rows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(trx);
  return encodeChangeCursor({ xid: rows[0]!.xmin, id: 0 });
}
