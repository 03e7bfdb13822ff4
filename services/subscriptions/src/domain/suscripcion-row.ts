import type { Selectable } from 'kysely';
import type { Subscription } from '@erp/contracts';
import type { SuscripcionesTable } from '../db/tables';

export type SuscripcionRow = Selectable<SuscripcionesTable>;

/** The subscription as the API answers it (without its secret, which only creation shows). */
export function toSuscripcion(row: SuscripcionRow): Subscription {
  return {
    id: row.id,
    url: row.url,
    events: row.eventos,
    descripcion: row.descripcion,
    enable: row.enable ? 1 : 0,
    motivo_deshabilitada: row.motivo_deshabilitada,
    created_at: row.created_at.toISOString(),
  };
}
