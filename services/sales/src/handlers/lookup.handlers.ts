import type { Kysely } from 'kysely';
import type { Handlers } from '@erp/bus';
import { paginate, type salesApiSubjects } from '@erp/contracts';
import { listCanales, listClientes, listDocumentos } from '../db/lookup.repository';
import type { SalesDb } from '../db/tables';

type LookupSubjects = 'sales.documento.list' | 'sales.canal.list' | 'sales.cliente.list';

/** The read-only lookups a partner needs to write a sale: document types, channels and customers. */
export function lookupHandlers(db: Kysely<SalesDb>): Pick<Handlers<typeof salesApiSubjects>, LookupSubjects> {
  return {
    'sales.documento.list': async (_request, ctx) =>
      (await listDocumentos(db, ctx.empresa.id)).map(({ sucursal_id, ...documento }) => ({ ...documento, id_sucursal: sucursal_id })),
    'sales.canal.list': async (_request, ctx) => listCanales(db, ctx.empresa.id),
    'sales.cliente.list': async (request, ctx) => {
      const { items, total } = await listClientes(db, ctx.empresa.id, request);
      const filters_applied = {
        ...(request.email !== undefined ? { email: request.email } : {}),
        ...(request.q !== undefined ? { q: request.q } : {}),
      };
      return { items, pagination: paginate(request, total), filters_applied };
    },
  };
}
