import type { Bus } from '@erp/bus';
import type { TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import type { PackagesDb } from '../db/tables';
import { importPackages, type ImportRequest } from '../flows/import-packages.flow';

/** `packages.import`: the flow resolves branches and advisors, then writes the new packages. */
export function importPackagesHandler(db: Kysely<PackagesDb>, bus: Bus, onCommitted: () => void = () => undefined) {
  return (req: ImportRequest, ctx: TenantContext) => importPackages({ db, bus, onCommitted }, req, ctx);
}
