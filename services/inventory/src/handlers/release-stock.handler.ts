import type { TenantContext } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';
import { releaseReserva } from '../flows/reservas.flow';

export function releaseStockHandler(db: Kysely<InventoryDb>) {
  return async ({ clave }: { clave: string }, ctx: TenantContext) => inTransaction(db, (trx) => releaseReserva(trx, ctx.empresa.id, clave));
}
