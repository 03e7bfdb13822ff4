import { wireErrorOf, type Logger } from '@erp/bus';
import type { ParsedRequestOf, TenantContext, inventorySubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';
import { reserveStockMany } from '../flows/reservas.flow';

type ReserveManyRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.stock.reserve-many'>;

export function reserveStockManyHandler(db: Kysely<InventoryDb>, logger: Logger, options: { checkAfterMs: number }) {
  return async ({ reservas }: ReserveManyRequest, ctx: TenantContext) => {
    const resultados = await inTransaction(db, (trx) =>
      reserveStockMany(trx, reservas, {
        empresaId: ctx.empresa.id,
        allowNegative: ctx.empresa.venderSinStock,
        checkAfterMs: options.checkAfterMs,
      }),
    );
    return {
      resultados: resultados.map((r) =>
        'error' in r
          ? { clave: r.clave, error: wireErrorOf(r.error, () => logger.child({ requestId: ctx.requestId, clave: r.clave })) }
          : r,
      ),
    };
  };
}
