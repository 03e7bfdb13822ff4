import type { Selectable } from 'kysely';
import type { PartnerEvent } from '@erp/contracts';
import type { EventosTable } from '../db/tables';
import { currentData } from './partner-events';

export type EventoRow = Selectable<EventosTable>;

/** The logged event as the feed (`GET /events`) answers it, its `data` as it goes out now. */
export function toEvento(row: EventoRow): PartnerEvent {
  return { id: row.id, type: row.tipo, timestamp: row.ocurrido_at.toISOString(), data: currentData(row.tipo, row.data) };
}
