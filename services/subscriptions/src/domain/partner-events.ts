import { createHash } from 'node:crypto';
import type {
  API_KEY_CHANGES,
  EventType,
  PayloadOf,
  StockChangedData,
  exportsEvents,
  gatewayEvents,
  inventoryEvents,
  packagesEvents,
  returnsEvents,
  salesEvents,
} from '@erp/contracts';

/** A partner event derived from one event of the stream, before it is written to the log. */
export interface PartnerEventDraft {
  id: string;
  empresaId: number;
  tipo: EventType;
  /** Deliveries of one resource go out in `orden`. */
  recurso: string;
  orden: number;
  data: Record<string, unknown>;
}

export interface SourceEvent {
  subject: string;
  payload: unknown;
  /** Id of the source event (its outbox id): partner ids derive from it, so a redelivery maps to the same ids. */
  eventId: string;
  streamSequence: number;
}

type Sales = typeof salesEvents;
type Returns = typeof returnsEvents;

// One stream event yields at most this many partner events (a stock change per product and warehouse).
const PER_SOURCE = 10_000;

/** Partner event id: stable for a source event and its position in it. */
export function partnerEventId(sourceId: string, index: number): string {
  return `evt_${createHash('sha256').update(`${sourceId}:${index}`).digest('hex').slice(0, 32)}`;
}

/** The first `orden` of the partner events of stream events after `streamSequence`. */
export function ordenAfter(streamSequence: number): number {
  return (streamSequence + 1) * PER_SOURCE;
}

/**
 * The partner events one stream event stands for; none for events partners do not see (or that
 * were recorded before they carried the resource, interface < 1.5.0).
 */
export function partnerEventsOf(source: SourceEvent): PartnerEventDraft[] {
  const draft = (index: number, empresaId: number, tipo: EventType, recurso: string, data: Record<string, unknown>): PartnerEventDraft => ({
    id: partnerEventId(source.eventId, index),
    empresaId,
    tipo,
    recurso,
    orden: source.streamSequence * PER_SOURCE + index,
    data,
  });
  switch (source.subject) {
    case 'events.sales.sale.created':
    case 'events.sales.sale.updated':
    case 'events.sales.sale.annulled': {
      const event = source.payload as PayloadOf<Sales, 'events.sales.sale.updated'>;
      if (!event.venta) return [];
      const tipo = SALE_TYPES[source.subject]!;
      return [draft(0, event.empresa_id, tipo, `sale:${event.id_venta}`, event.venta)];
    }
    case 'events.returns.return.created':
    case 'events.returns.return.annulled': {
      const event = source.payload as PayloadOf<Returns, 'events.returns.return.created'>;
      if (!event.devolucion) return [];
      const tipo = source.subject === 'events.returns.return.created' ? 'return.created' : 'return.annulled';
      return [draft(0, event.empresa_id, tipo, `return:${event.id_devolucion}`, event.devolucion)];
    }
    case 'events.packages.package.imported': {
      const event = source.payload as PayloadOf<typeof packagesEvents, 'events.packages.package.imported'>;
      return [
        draft(0, event.empresa_id, 'package.imported', `package:${source.eventId}`, {
          created: event.paquetes.length,
          items: event.paquetes,
        }),
      ];
    }
    case 'events.exports.export.completed':
    case 'events.exports.export.failed': {
      const event = source.payload as PayloadOf<typeof exportsEvents, 'events.exports.export.completed'>;
      const tipo = source.subject === 'events.exports.export.completed' ? 'export.completed' : 'export.failed';
      return [draft(0, event.empresa_id, tipo, `export:${event.exportacion.id}`, event.exportacion)];
    }
    case 'events.gateway.apikey.changed': {
      const event = source.payload as PayloadOf<typeof gatewayEvents, 'events.gateway.apikey.changed'>;
      return [draft(0, event.empresa_id, API_KEY_TYPES[event.cambio], `api_key:${event.api_key.id}`, event.api_key)];
    }
    case 'events.inventory.stock.changed': {
      const event = source.payload as PayloadOf<typeof inventoryEvents, 'events.inventory.stock.changed'>;
      const causa = event.causa ?? {};
      return event.movimientos.slice(0, PER_SOURCE).map((m, i) =>
        draft(i, event.empresa_id, 'stock.changed', `stock:${m.id_producto}:${m.id_bodega}`, {
          id_producto: m.id_producto,
          codigo: m.codigo,
          id_bodega: m.id_bodega,
          // Quantities leave as JSON numbers like every stock figure of the API.
          stock: Number(m.stock),
          cambio: Number(m.cambio),
          motivo: m.motivo,
          origen: m.origen,
          id_venta: causa.id_venta ?? null,
          id_devolucion: causa.id_devolucion ?? null,
          plataforma: causa.plataforma ?? null,
          id_pedido_plataforma: causa.id_pedido_plataforma ?? null,
          referencia: m.referencia,
        }),
      );
    }
    default:
      return [];
  }
}

/**
 * `data` of a logged event as it goes out now: a `stock.changed` logged before it named its cause
 * (interface 1.6.0) carries the cause's fields as null, as every event logged since does. Events
 * leave the log after `EVENTS_RETENTION_DAYS`.
 */
export function currentData(tipo: string, data: Record<string, unknown>): Record<string, unknown> {
  return tipo === 'stock.changed' && !('id_venta' in data) ? { ...data, ...NO_CAUSE } : data;
}

const NO_CAUSE = { id_venta: null, id_devolucion: null, plataforma: null, id_pedido_plataforma: null } satisfies Partial<StockChangedData>;

const API_KEY_TYPES: Record<(typeof API_KEY_CHANGES)[number], EventType> = {
  expiring: 'api_key.expiring',
  rotated: 'api_key.rotated',
  revoked: 'api_key.revoked',
};

const SALE_TYPES: Record<string, EventType> = {
  'events.sales.sale.created': 'sale.created',
  'events.sales.sale.updated': 'sale.updated',
  'events.sales.sale.annulled': 'sale.annulled',
};
