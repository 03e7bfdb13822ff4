import type { Bus } from '@erp/bus';
import type { TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import type { PackagesDb } from '../db/tables';
import { importPaquetes, type ImportRequest } from '../flows/import-paquetes.flow';

/** `packages.import`: the flow resolves branches and advisors, then writes the new packages. */
export function importPackagesHandler(db: Kysely<PackagesDb>, bus: Bus, onCommitted: () => void = () => undefined) {
  return (req: ImportRequest, ctx: TenantContext) => importPaquetes({ db, bus, onCommitted }, req, ctx);
}
