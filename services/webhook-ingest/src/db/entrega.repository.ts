import { sql, type Kysely, type Transaction } from 'kysely';
import type { EntregaResumen, EstadoEntrega } from '@erp/contracts';
import type { WebhookDb } from './tables';

type Db = Kysely<WebhookDb> | Transaction<WebhookDb>;

/** Stores a delivery once per (integration, dedup key); undefined when that key was already stored. */
export async function insertEntrega(
  db: Db,
  row: Pick<
    WebhookDb['entregas'],
    'integracion_id' | 'empresa_id' | 'plataforma' | 'recurso' | 'tema' | 'clave_dedup' | 'referencia' | 'cuerpo'
  > & { headers: Record<string, string> },
): Promise<number | undefined> {
  const inserted = await db
    .insertInto('entregas')
    .values({ ...row, headers: JSON.stringify(row.headers), motivo: null, id_venta: null, procesada_at: null })
    .onConflict((oc) => oc.columns(['integracion_id', 'clave_dedup']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id;
}

export async function findEntregaId(db: Db, integracionId: number, clave: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('entregas')
    .select('id')
    .where('integracion_id', '=', integracionId)
    .where('clave_dedup', '=', clave)
    .executeTakeFirst();
  return row?.id;
}

/** A delivery with its integration, locked for processing (one worker at a time per delivery). */
export async function lockEntrega(trx: Transaction<WebhookDb>, id: number) {
  return trx
    .selectFrom('entregas as e')
    .innerJoin('integraciones as i', 'i.id', 'e.integracion_id')
    .select([
      'e.id',
      'e.empresa_id',
      'e.plataforma',
      'e.recurso',
      'e.tema',
      'e.referencia',
      'e.cuerpo',
      'e.estado',
      'e.intentos',
      'i.id as integracion_id',
      'i.usuario_id',
      'i.sucursal_id',
      'i.bodega_id',
      'i.documento_id',
      'i.canal_id',
      'i.producto_envio_id',
    ])
    .where('e.id', '=', id)
    .forUpdate('e')
    .executeTakeFirst();
}

export type LockedEntrega = NonNullable<Awaited<ReturnType<typeof lockEntrega>>>;

export async function finishEntrega(
  db: Db,
  id: number,
  outcome: { estado: Exclude<EstadoEntrega, 'recibida'>; motivo?: string | null; id_venta?: number | null },
  /** Attempts this outcome took (failed attempts roll back, so they are counted when one finishes). */
  attempts = 1,
): Promise<void> {
  await db
    .updateTable('entregas')
    .set({
      estado: outcome.estado,
      motivo: outcome.motivo ?? null,
      id_venta: outcome.id_venta ?? null,
      intentos: sql<number>`intentos + ${attempts}`,
      procesada_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .execute();
}

export async function listEntregas(db: Db, filter: { estado: EstadoEntrega; empresa_id?: number; limit: number }): Promise<EntregaResumen[]> {
  let q = db
    .selectFrom('entregas')
    .select([
      'id',
      'empresa_id',
      'integracion_id',
      'plataforma',
      'recurso',
      'tema',
      'referencia',
      'estado',
      'motivo',
      'intentos',
      'id_venta',
      'recibida_at',
      'procesada_at',
    ])
    .where('estado', '=', filter.estado)
    .orderBy('id')
    .limit(filter.limit);
  if (filter.empresa_id !== undefined) q = q.where('empresa_id', '=', filter.empresa_id);
  const rows = await q.execute();
  return rows.map(({ integracion_id, recibida_at, procesada_at, ...r }) => ({
    ...r,
    id_integracion: integracion_id,
    recibida_at: recibida_at.toISOString(),
    procesada_at: procesada_at ? procesada_at.toISOString() : null,
  }));
}

/** Puts failed deliveries back to `recibida`; returns the ones it moved. */
export async function reopenFailed(trx: Transaction<WebhookDb>, filter: { ids?: number[]; empresa_id?: number }) {
  let q = trx.updateTable('entregas').set({ estado: 'recibida', motivo: null, procesada_at: null }).where('estado', '=', 'fallida');
  if (filter.ids) q = q.where('id', 'in', filter.ids.length > 0 ? filter.ids : [0]);
  if (filter.empresa_id !== undefined) q = q.where('empresa_id', '=', filter.empresa_id);
  return q.returning(['id', 'empresa_id']).execute();
}
