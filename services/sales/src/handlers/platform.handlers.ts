import type { Kysely } from 'kysely';
import type { Bus, Handlers } from '@erp/bus';
import type { salesPlatformSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { findClienteIdByEmail, findOrCreateClienteByEmail } from '../db/catalog.repository';
import type { SalesDb } from '../db/tables';
import { findVentaByReferencia } from '../db/venta-read.repository';
import { annulVenta } from '../flows/annul-venta.flow';

/** Subjects of e-commerce integrations: customers by email, sales by reference, annulment. */
export function platformHandlers(db: Kysely<SalesDb>, bus: Bus): Handlers<typeof salesPlatformSubjects> {
  return {
    // A known customer (the usual case) is one read; only a new one takes the lock and a transaction.
    'sales.customer.find-or-create': async ({ email, nombre }, ctx) => {
      const id = await findClienteIdByEmail(db, ctx.empresa.id, email);
      if (id !== undefined) return { id, creado: false };
      return inTransaction(db, (trx) => findOrCreateClienteByEmail(trx, ctx.empresa.id, email, nombre));
    },

    'sales.sale.by-reference': async ({ referencia_externa }, ctx) => findVentaByReferencia(db, ctx.empresa.id, referencia_externa),

    // The same annulment as the back office's, for the caller's company only.
    'sales.sale.annul': async ({ id_venta }, ctx) => annulVenta(db, bus, { empresa_id: ctx.empresa.id, id_venta }, ctx),
  };
}
