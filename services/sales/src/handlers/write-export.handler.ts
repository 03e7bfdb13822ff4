import type { Kysely } from 'kysely';
import { writeExportFile, type Bus } from '@erp/bus';
import { changeCursorAfterSnapshot, type SnapshotExportOptions } from '@erp/db';
import type { ParsedRequestOf, TenantContext, salesExportSubjects } from '@erp/contracts';
import type { SalesDb } from '../db/tables';
import { ventaExportRows } from '../db/venta-list.repository';

/** `sales.export.write`: the file of an export of sales, from one snapshot. */
export function writeExportHandler(db: Kysely<SalesDb>, bus: Bus, pacing: SnapshotExportOptions) {
  return async ({ objeto, filtros }: ParsedRequestOf<typeof salesExportSubjects, 'sales.export.write'>, ctx: TenantContext) =>
    writeExportFile(
      bus,
      db,
      objeto,
      {
        cursor: changeCursorAfterSnapshot,
        rows: (trx) => ventaExportRows(trx, ctx.empresa.id, filtros),
      },
      pacing,
    );
}
