import type { Kysely } from 'kysely';
import { writeExportFile, type Bus } from '@erp/bus';
import { changeCursorAfterSnapshot, type SnapshotExportOptions } from '@erp/db';
import type { ParsedRequestOf, TenantContext, inventoryExportSubjects } from '@erp/contracts';
import { productoExportRows } from '../db/producto-list.repository';
import type { InventoryDb } from '../db/tables';

/** `inventory.export.write`: the file of an export of products, from one snapshot. */
export function writeExportHandler(db: Kysely<InventoryDb>, bus: Bus, pacing: SnapshotExportOptions) {
  return async ({ objeto, filtros }: ParsedRequestOf<typeof inventoryExportSubjects, 'inventory.export.write'>, ctx: TenantContext) =>
    writeExportFile(
      bus,
      db,
      objeto,
      {
        cursor: changeCursorAfterSnapshot,
        rows: (trx) => productoExportRows(trx, ctx.empresa.id, filtros),
      },
      pacing,
    );
}
