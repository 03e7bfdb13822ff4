import type { TenantContext } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';
import { confirmReserva } from '../flows/reservas.flow';

export function confirmStockHandler(db: Kysely<InventoryDb>) {
  return async ({ clave }: { clave: string }, ctx: TenantContext) => inTransaction(db, (trx) => confirmReserva(trx, ctx.empresa.id, clave));
}
