import { z } from 'zod';
import { defineCatalog } from './catalog';
import { IdParam, PageRequest, Timestamp, documentAs, pageReply, queryInt } from './http';

/** The partner event types (interface 1.5.0; `export.*` 1.6.0) a subscription can ask for, besides `*`. */
export const EVENT_TYPES = [
  'sale.created',
  'sale.updated',
  'sale.annulled',
  'stock.changed',
  'return.created',
  'return.annulled',
  'package.imported',
  'export.completed',
  'export.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Subscriptions a company may hold at once. */
export const MAX_SUBSCRIPTIONS = 20;

const EVENT_TYPE_MESSAGE = `Tipo de evento desconocido; los válidos son ${EVENT_TYPES.join(', ')} o *`;
const EventTypeName = z.enum(EVENT_TYPES, { message: EVENT_TYPE_MESSAGE });
const EVENT_TYPE_PATTERN = EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|');

/** Body of `POST /event-subscriptions`. Whether the URL may be called is checked by the service (DNS). */
export const SubscriptionCreateBody = z.object({
  url: z
    .string({ message: 'La URL es obligatoria' })
    .trim()
    .max(2000, 'La URL no puede tener más de 2000 caracteres')
    .pipe(z.url({ protocol: /^https?$/, message: 'Debe ser una URL http(s) válida' })),
  events: z
    .array(z.union([z.literal('*'), EventTypeName], { message: EVENT_TYPE_MESSAGE }), { message: 'Debe ser una lista de tipos de evento' })
    .min(1, 'Debe suscribirse al menos a un tipo de evento')
    .max(EVENT_TYPES.length + 1, 'Demasiados tipos de evento')
    .transform((events) => [...new Set(events)]),
  descripcion: z.string().trim().max(255, 'La descripción no puede tener más de 255 caracteres').optional(),
});
export type SubscriptionCreateBody = z.output<typeof SubscriptionCreateBody>;

/** A subscription as every read answers it (the secret is shown only at creation). */
export const Subscription = z.object({
  id: z.number().int(),
  url: z.string(),
  events: z.array(z.string()),
  descripcion: z.string().nullable(),
  /** 1 while it receives events; 0 once disabled after failing for the whole retry window. */
  enable: z.union([z.literal(0), z.literal(1)]),
  /** Why it was disabled (null while enabled). */
  motivo_deshabilitada: z.string().nullable(),
  created_at: Timestamp,
});
export type Subscription = z.output<typeof Subscription>;

export const SubscriptionCreated = Subscription.extend({
  /** `whsec_<base64>`: the key of every delivery's `webhook-signature`. Shown only once. */
  secret: z.string(),
});

/** One delivery attempt of an event to a subscription. */
export const DeliveryAttempt = z.object({
  id: z.number().int(),
  event_id: z.string(),
  type: z.string(),
  attempt: z.number().int(),
  /** HTTP status the receiver answered; null when it did not answer (see `error`). */
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  timestamp: Timestamp,
});

/** An event as it is delivered and as the feed lists it. */
export const PartnerEvent = z.object({
  id: z.string(),
  type: z.string(),
  timestamp: Timestamp,
  data: z.record(z.string(), z.unknown()),
});
export type PartnerEvent = z.output<typeof PartnerEvent>;

/** `data` of `stock.changed`: one product in one warehouse. */
export const StockChangedData = z.object({
  id_producto: z.number().int(),
  codigo: z.string(),
  id_bodega: z.number().int(),
  /** Stock after the change. */
  stock: z.number(),
  /** The change itself (negative when stock left). */
  cambio: z.number(),
  /** Kind of movement: reserva, liberacion, ajuste. */
  motivo: z.string(),
  /** What moved it (venta, actualizacion_venta, anulacion_venta, devolucion, …). */
  origen: z.string(),
  /** The key of the operation that moved it. */
  referencia: z.string().nullable(),
});

/** `data` of `package.imported`: the packages one import created. */
export const PackageImportedData = z.object({
  created: z.number().int(),
  items: z.array(z.object({ id: z.number().int(), wr: z.string(), id_sucursal: z.number().int() })),
});

export const SubscriptionIdParam = IdParam;

export const ReplayBody = z.object({
  desde: z.iso.datetime({ offset: true, message: 'Debe ser una fecha y hora ISO 8601 (por ejemplo 2026-01-31T12:00:00Z)' }),
});

export const EventsQuery = z.object({
  after: z
    .string()
    .regex(/^evt_[A-Za-z0-9]{1,64}$/, 'Debe ser el id de un evento (evt_…)')
    .meta({
      description: 'Los eventos posteriores a este, que la empresa aún conserva (si no: «El evento no existe o ya no se conserva»).',
    })
    .optional(),
  types: documentAs(
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t !== ''),
      )
      .pipe(z.array(EventTypeName).min(1, 'Debe indicar al menos un tipo de evento')),
    {
      type: 'string',
      pattern: `^(${EVENT_TYPE_PATTERN})(,(${EVENT_TYPE_PATTERN}))*$`,
      description: `Tipos de evento separados por comas: ${EVENT_TYPES.join(', ')}.`,
    },
  ).optional(),
  per_page: queryInt({ min: 1, max: 500 }).default(100),
});

export const EventsPagination = z.object({
  per_page: z.number().int(),
  /** Send it as `after` to get the next events; null when there is none yet. */
  next_after: z.string().nullable(),
  has_more: z.boolean(),
});

export const subscriptionsSubjects = defineCatalog({
  'subscriptions.subscription.create': {
    tenant: true,
    errors: ['VALIDATION_FAILED', 'BUSINESS_RULE'],
    request: SubscriptionCreateBody,
    reply: SubscriptionCreated,
  },
  'subscriptions.subscription.list': {
    tenant: true,
    errors: [],
    request: PageRequest,
    reply: pageReply(Subscription),
  },
  'subscriptions.subscription.get': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: Subscription,
  },
  /** Deletes it: its pending deliveries go with it, so nothing more is sent. */
  'subscriptions.subscription.delete': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: Subscription,
  },
  'subscriptions.delivery.list': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: PageRequest.extend({ id: z.number().int().positive() }),
    reply: pageReply(DeliveryAttempt),
  },
  /** Queues again every event of its types since `desde` (same ids). */
  'subscriptions.subscription.replay': {
    tenant: true,
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
    request: z.object({ id: z.number().int().positive(), desde: z.string() }),
    reply: z.object({ encolados: z.number().int() }),
  },
  'subscriptions.event.list': {
    tenant: true,
    errors: ['VALIDATION_FAILED'],
    request: z.object({
      after: z.string().optional(),
      types: z.array(EventTypeName).optional(),
      per_page: z.number().int().min(1).max(500),
    }),
    reply: z.object({ items: z.array(PartnerEvent), pagination: EventsPagination }),
  },
});
