import type { Kysely } from 'kysely';
import { containsPattern, sql } from '@erp/db';
import type { CustomersListRequest } from '@erp/contracts';
import type { SalesDb } from './tables';

/** The company's active document types, as `GET /document-types` lists them: by branch, name and id. */
export async function listDocumentos(db: Kysely<SalesDb>, empresaId: number) {
  return db
    .selectFrom('documentos')
    .select(['id', 'nombre', 'prefijo', 'sucursal_id', 'solo_cotizacion'])
    .where('empresa_id', '=', empresaId)
    .where('activo', '=', true)
    .orderBy('sucursal_id')
    .orderBy('nombre')
    .orderBy('id')
    .execute();
}

/** The company's active channels, by name and id. */
export async function listCanales(db: Kysely<SalesDb>, empresaId: number) {
  return db
    .selectFrom('canales')
    .select(['id', 'nombre'])
    .where('empresa_id', '=', empresaId)
    .where('activo', '=', true)
    .orderBy('nombre')
    .orderBy('id')
    .execute();
}

/**
 * One page of the company's active customers, by name and id. `email` is compared lower-cased
 * (the index of platform orders' lookups); `q` matches anywhere in the name or the document number.
 */
export async function listClientes(db: Kysely<SalesDb>, empresaId: number, request: CustomersListRequest) {
  let q = db.selectFrom('clientes').where('empresa_id', '=', empresaId).where('activo', '=', true);
  if (request.email !== undefined) q = q.where(sql`lower(email)`, '=', request.email);
  if (request.q !== undefined) {
    const pattern = containsPattern(request.q);
    q = q.where((eb) => eb.or([eb('nombre', 'ilike', pattern), eb('numero_documento', 'ilike', pattern)]));
  }
  const [items, count] = await Promise.all([
    q
      .select(['id', 'nombre', 'email', 'numero_documento', 'limite_credito'])
      .orderBy('nombre')
      .orderBy('id')
      .limit(request.per_page)
      .offset((request.page - 1) * request.per_page)
      .execute(),
    q.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.total) };
}
