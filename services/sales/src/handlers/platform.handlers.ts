import { sql, type Kysely } from 'kysely';
import type { Bus, Handlers } from '@erp/bus';
import type { salesPlatformSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { SalesDb } from '../db/tables';
import { adminHandlers } from './admin.handlers';

/** Subjects of e-commerce integrations: customers by email, sales by reference, annulment. */
export function platformHandlers(db: Kysely<SalesDb>, bus: Bus): Handlers<typeof salesPlatformSubjects> {
  const admin = adminHandlers(db, bus);
  return {
    'sales.customer.find-or-create': async ({ email, nombre }, ctx) =>
      inTransaction(db, async (trx) => {
        // One customer per email and company even when two orders of a new customer arrive at once.
        await sql`select pg_advisory_xact_lock(hashtext('cliente-email'), hashtext(${`${ctx.empresa.id}:${email}`}))`.execute(trx);
        const existing = await trx
          .selectFrom('clientes')
          .select('id')
          .where('empresa_id', '=', ctx.empresa.id)
          .where(sql`lower(email)`, '=', email)
          .orderBy('activo', 'desc')
          .orderBy('id')
          .executeTakeFirst();
        if (existing) return { id: existing.id, creado: false };
        const { id } = await trx
          .insertInto('clientes')
          .values({ empresa_id: ctx.empresa.id, nombre: nombre ?? email, email })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { id, creado: true };
      }),

    'sales.sale.by-reference': async ({ referencia_externa }, ctx) =>
      (await db
        .selectFrom('ventas')
        .select(['id', 'estado'])
        .where('empresa_id', '=', ctx.empresa.id)
        .where('referencia_externa', '=', referencia_externa)
        .executeTakeFirst()) ?? null,

    // The same annulment as the back office's, for the caller's company only.
    'sales.sale.annul': async ({ id_venta }, ctx) => admin['sales.admin.annul']({ empresa_id: ctx.empresa.id, id_venta }, ctx),
  };
}
