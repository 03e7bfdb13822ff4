import type { Kysely } from 'kysely';
import { writeExportFile, type Bus } from '@erp/bus';
import { changeCursorAfterSnapshot, type SnapshotExportOptions } from '@erp/db';
import type { ParsedRequestOf, TenantContext, returnsExportSubjects } from '@erp/contracts';
import { devolucionExportRows } from '../db/devolucion-list.repository';
import type { ReturnsDb } from '../db/tables';

/** `returns.export.write`: the file of an export of returns, from one snapshot. */
export function writeExportHandler(db: Kysely<ReturnsDb>, bus: Bus, pacing: SnapshotExportOptions) {
  return async ({ objeto, filtros }: ParsedRequestOf<typeof returnsExportSubjects, 'returns.export.write'>, ctx: TenantContext) =>
    writeExportFile(
      bus,
      db,
      objeto,
      {
        cursor: changeCursorAfterSnapshot,
        rows: (trx) => devolucionExportRows(trx, ctx.empresa.id, filtros),
      },
      pacing,
    );
}
