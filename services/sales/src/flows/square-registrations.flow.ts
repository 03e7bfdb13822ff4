import type { Kysely } from 'kysely';
import { claimEvent, type Bus } from '@erp/bus';
import { inTransaction } from '@erp/db';
import {
  devolucionesActivasOf,
  addDevolucionesActivas,
  addMontoDevuelto,
  confirmRegistro,
  discardRegistro,
  pendingRegistros,
} from '../db/registro-devolucion.repository';
import type { SalesDb } from '../db/tables';
import { lockVenta } from '../db/venta.repository';
import { RETURNS_CLAIMER, RETURN_CREATED, returnClaim } from '../domain/return-claims';
import { busReturns } from '../ports/returns.port';

/**
 * Squares the pending registrations of a sale, in a transaction of its own that holds the sale's
 * row lock: asks the returns service which became committed returns, confirms those (booking their
 * amount, as their created event would) and discards the others (they no longer count in
 * `devoluciones_activas`). When a return of the sale is being
 * made right now the returns service answers `ocupada` and every registration keeps counting.
 * Annulments and updates call it before their own transaction, so what it settles stays settled
 * even when they are then refused. Answers the sale's count of active returns (undefined when the
 * company has no such sale).
 */
export async function squareRegistrations(
  db: Kysely<SalesDb>,
  bus: Bus,
  empresaId: number,
  ventaId: number,
  requestId: string,
): Promise<number | undefined> {
  return inTransaction(db, async (trx) => {
    const venta = await lockVenta(trx, empresaId, ventaId);
    if (!venta) return undefined;
    const claves = await pendingRegistros(trx, empresaId, ventaId);
    if (claves.length === 0) return venta.devoluciones_activas;
    const answer = await busReturns(bus).ventaRegistrations({ requestId }, { empresa_id: empresaId, id_venta: ventaId, claves });
    if (answer.ocupada) return venta.devoluciones_activas;
    const committed = new Map(answer.devoluciones.map((d) => [d.clave, d]));
    let discarded = 0;
    for (const clave of claves) {
      const devolucion = committed.get(clave);
      if (devolucion === undefined) {
        if (await discardRegistro(trx, empresaId, clave)) discarded++;
        continue;
      }
      // The registration already counts the return; its amount is booked with the confirmation, in
      // this transaction, and its created event claimed so the consumer does not book it again.
      // Otherwise a sale would count the return without its amount until that event arrived
      // (redelivered only after its ack wait when sales died mid-delivery).
      await confirmRegistro(trx, empresaId, clave, devolucion.id_devolucion);
      if (await claimEvent(trx, RETURNS_CLAIMER, returnClaim(RETURN_CREATED, devolucion.id_devolucion))) {
        await addMontoDevuelto(trx, empresaId, ventaId, 1, devolucion.total, 0);
      }
    }
    if (discarded > 0) await addDevolucionesActivas(trx, empresaId, ventaId, -discarded);
    return venta.devoluciones_activas - discarded;
  });
}

/** Squares the sale's registrations first when it counts active returns: then the caller's own transaction reads the settled count. */
export async function squareIfReturned(
  db: Kysely<SalesDb>,
  bus: Bus,
  empresaId: number,
  ventaId: number,
  requestId: string,
): Promise<void> {
  if ((await devolucionesActivasOf(db, empresaId, ventaId)) > 0) await squareRegistrations(db, bus, empresaId, ventaId, requestId);
}
