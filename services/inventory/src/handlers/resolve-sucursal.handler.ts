import type { TenantContext } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { listActiveSucursales } from '../db/lugar-list.repository';
import type { InventoryDb } from '../db/tables';
import { resolveBranch, type BranchQuery } from '../domain/resolve-sucursal';

export function resolveSucursalHandler(db: Kysely<InventoryDb>) {
  return async ({ items }: { items: BranchQuery[] }, ctx: TenantContext) => {
    const branches = await listActiveSucursales(db, ctx.empresa.id);
    return items.map((item) => resolveBranch(branches, item));
  };
}
