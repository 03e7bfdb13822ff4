import type { ColumnType, Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';

export const SUBSCRIPTIONS_SCHEMA = 'subscriptions';

export interface SuscripcionesTable {
  id: Generated<number>;
  empresa_id: number;
  url: string;
  eventos: string[];
  descripcion: string | null;
  secreto: string;
  enable: Generated<boolean>;
  motivo_deshabilitada: string | null;
  fallos_seguidos: Generated<number>;
  pausada_hasta: Date | null;
  secreto_anterior: string | null;
  secreto_anterior_hasta: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface EventosTable {
  posicion: Generated<number>;
  id: string;
  empresa_id: number;
  tipo: string;
  recurso: string;
  orden: number;
  ocurrido_at: Date;
  data: ColumnType<Record<string, unknown>, string, string>;
}

/** Received from the stream, waiting for every earlier event of it before entering the log. */
export interface EventosRecibidosTable {
  id: string;
  empresa_id: number;
  tipo: string;
  recurso: string;
  orden: number;
  data: ColumnType<Record<string, unknown>, string, string>;
  recibido_at: Generated<Date>;
}

export interface EntregasTable {
  id: Generated<number>;
  suscripcion_id: number;
  evento_id: string;
  recurso: string;
  orden: number;
  estado: Generated<'pendiente' | 'entregada'>;
  intentos: Generated<number>;
  proximo_intento_at: Generated<Date>;
  tomada_hasta: Date | null;
  primer_fallo_at: Date | null;
  entregada_at: Date | null;
}

export interface IntentosTable {
  id: Generated<number>;
  suscripcion_id: number;
  evento_id: string;
  tipo: string;
  intento: number;
  status: number | null;
  error: string | null;
  duracion_ms: number;
  created_at: Generated<Date>;
}

export interface SubscriptionsDb extends OutboxTables {
  suscripciones: SuscripcionesTable;
  eventos: EventosTable;
  eventos_recibidos: EventosRecibidosTable;
  entregas: EntregasTable;
  intentos: IntentosTable;
}
