import type { Kysely } from 'kysely';
import type { ParsedRequestOf, ReplyInputOf, returnsForSalesSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { tryLockVentaDevoluciones } from '../db/devolucion.repository';
import { devolucionesByRegistro } from '../db/devolucion-read.repository';
import type { ReturnsDb } from '../db/tables';

type RegistrationsRequest = ParsedRequestOf<typeof returnsForSalesSubjects, 'returns.sale.registrations'>;
type RegistrationsReply = ReplyInputOf<typeof returnsForSalesSubjects, 'returns.sale.registrations'>;

/**
 * Which of a sale's registration keys became committed returns. Answered under the sale's lock of
 * this service, taken without waiting: a return registers only while it holds that lock, so when
 * the lock is free every registration's transaction is over and a key without a return never will
 * have one. While a return of the sale is being made the answer is `ocupada` (the caller must
 * keep counting its registrations); waiting instead could deadlock with a return waiting on the
 * sale's row lock that the caller holds.
 */
export function saleRegistrationsHandler(db: Kysely<ReturnsDb>) {
  return async ({ empresa_id, id_venta, claves }: RegistrationsRequest): Promise<RegistrationsReply> =>
    inTransaction(db, async (trx) => {
      if (!(await tryLockVentaDevoluciones(trx, empresa_id, id_venta))) return { ocupada: true, devoluciones: [] };
      return { ocupada: false, devoluciones: await devolucionesByRegistro(trx, empresa_id, id_venta, claves) };
    });
}
