import { z } from 'zod';
import { defineCatalog } from './catalog';
import { IdParam, PageRequest, Timestamp, documentAs, pageReply, queryInt } from './http';
import { ApiKeyEventData } from './api-keys';
import { Exportacion } from './exports';
import { PLATAFORMAS } from './webhooks';
import { Return } from './returns';
import { Sale } from './sales';

/** The partner event types (interface 1.5.0; `export.*` 1.6.0; `api_key.*` 1.7.0) a subscription can ask for, besides `*`. */
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
  'api_key.expiring',
  'api_key.rotated',
  'api_key.revoked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Subscriptions a company may hold at once. */
export const MAX_SUBSCRIPTIONS = 20;

const EVENT_TYPE_MESSAGE = `Tipo de evento desconocido; los válidos son ${EVENT_TYPES.join(', ')} o *`;
const EventTypeName = z.enum(EVENT_TYPES, { message: EVENT_TYPE_MESSAGE });
const EVENT_TYPE_PATTERN = EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|');

const SubscriptionUrl = z
  .string({ message: 'La URL es obligatoria' })
  .trim()
  .max(2000, 'La URL no puede tener más de 2000 caracteres')
  .pipe(z.url({ protocol: /^https?$/, message: 'Debe ser una URL http(s) válida' }));
const SubscriptionEvents = z
  .array(z.union([z.literal('*'), EventTypeName], { message: EVENT_TYPE_MESSAGE }), { message: 'Debe ser una lista de tipos de evento' })
  .min(1, 'Debe suscribirse al menos a un tipo de evento')
  .max(EVENT_TYPES.length + 1, 'Demasiados tipos de evento')
  .transform((events) => [...new Set(events)]);
const Descripcion = z.string().trim().max(255, 'La descripción no puede tener más de 255 caracteres');

/** Body of `POST /event-subscriptions`. Whether the URL may be called is checked by the service (DNS). */
export const SubscriptionCreateBody = z.strictObject({
  url: SubscriptionUrl,
  events: SubscriptionEvents,
  descripcion: Descripcion.optional(),
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

/**
 * Body of `PATCH /event-subscriptions/{id}`: the fields to change. `enable: 1` re-enables a
 * subscription (also one the retry window disabled) and resumes what it is still owed; `enable: 0`
 * stops its deliveries and queues nothing new until it is enabled again.
 */
export const SubscriptionUpdateBody = z
  .strictObject({
    url: SubscriptionUrl.optional(),
    events: SubscriptionEvents.optional(),
    descripcion: Descripcion.nullable().optional(),
    enable: z.union([z.literal(0), z.literal(1)], { message: 'Debe ser 1 (habilitada) o 0 (deshabilitada)' }).optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'Indique al menos un campo: url, events, descripcion o enable' });
export type SubscriptionUpdateBody = z.output<typeof SubscriptionUpdateBody>;

/** Body of the subscription's actions without parameters (`rotate-secret`, `test`): an empty object. */
export const EmptyBody = z.strictObject({});

/** How long deliveries are still signed with the secret a rotation replaced as well. */
export const SECRET_OVERLAP_HOURS = 24;

export const SecretRotated = z.object({
  /** The new `whsec_…` secret: shown only here. */
  secret: z.string(),
  /** Until then every delivery carries a signature with the previous secret too. */
  secreto_anterior_hasta: Timestamp,
});

/** The `ping` event `POST /event-subscriptions/{id}/test` queued: it goes through the normal delivery path. */
export const TestQueued = z.object({ event_id: z.string(), type: z.literal('ping') });

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

/** Kinds of stock movement a `stock.changed` reports (`motivo`). */
export const MOTIVOS_STOCK = ['inventario_inicial', 'reserva', 'liberacion', 'ajuste'] as const;
/** What moved the stock (`origen`). */
export const ORIGENES_STOCK = [
  'venta',
  'actualizacion_venta',
  'anulacion_venta',
  'devolucion',
  'anulacion_devolucion',
  'webhook',
  'inventario',
] as const;

/** `data` of `stock.changed`: one product in one warehouse. */
export const StockChangedData = z.object({
  id_producto: z.number().int(),
  codigo: z.string(),
  id_bodega: z.number().int(),
  /** Stock after the change. */
  stock: z.number(),
  /** The change itself (negative when stock left). */
  cambio: z.number(),
  motivo: z.enum(MOTIVOS_STOCK).meta({
    description:
      'Tipo de movimiento: `reserva` (sale para una venta al crearla, o al confirmarse una venta cuya reserva se había liberado), `liberacion` (vuelve la reserva de una venta que no llegó a registrarse: su `id_venta` no existe), `ajuste` (cambio relativo o absoluto: edición o anulación de una venta, devolución y su anulación, stock enviado por una plataforma), `inventario_inicial` (carga inicial).',
  }),
  origen: z.enum(ORIGENES_STOCK).meta({
    description:
      'Qué lo movió: `venta` (crear una venta, también la de un pedido de plataforma; `id_venta`), `actualizacion_venta` (`PUT /sales/{id}`, por diferencia; `id_venta`), `anulacion_venta` (`id_venta`), `devolucion` (`id_devolucion`), `anulacion_devolucion` (`id_devolucion`), `webhook` (stock de un producto enviado por una plataforma; `plataforma`), `inventario` (carga inicial; ninguna causa).',
  }),
  id_venta: z.number().int().nullable().meta({
    description:
      'La venta cuya creación, edición o anulación movió el stock (`GET /sales/{id}`); null si no fue una venta. En una `liberacion` es el id que habría tenido una venta que no llegó a registrarse.',
  }),
  id_devolucion: z.number().int().nullable().meta({
    description:
      'La devolución que repuso el stock, o cuya anulación lo volvió a sacar (`GET /returns/{id}`); null si no fue una devolución.',
  }),
  plataforma: z.enum(PLATAFORMAS).nullable().meta({
    description:
      'La plataforma de comercio electrónico detrás del movimiento: la de un pedido cuya venta movió el stock (con `id_pedido_plataforma`), o la que envió el stock de un producto (`origen` `webhook`); null si no intervino ninguna.',
  }),
  id_pedido_plataforma: z.string().nullable().meta({
    description:
      'El id del pedido en la plataforma (`727`) cuando la venta de `id_venta` se hizo a partir de un pedido de `plataforma` (su `referencia_externa` es `woo-727` o `shop-727`); null en otro caso.',
  }),
  referencia: z.string().nullable().meta({
    description:
      'Clave interna de la operación que movió el stock: la comparten todos sus movimientos (la reserva de una venta y su liberación, por ejemplo). No es el id de ningún recurso: la causa está en `id_venta`, `id_devolucion`, `plataforma` e `id_pedido_plataforma`.',
  }),
});
export type StockChangedData = z.output<typeof StockChangedData>;

/** `data` of `package.imported`: the packages one import created. */
export const PackageImportedData = z.object({
  created: z.number().int(),
  items: z.array(z.object({ id: z.number().int(), wr: z.string(), id_sucursal: z.number().int() })),
});

/** `data` of `ping`, the event `POST /event-subscriptions/{id}/test` sends to that subscription only. */
export const PingData = z.object({ id_suscripcion: z.number().int(), mensaje: z.string() });

const typedEvent = <T extends string, D extends z.ZodType>(type: T, data: D, name: string) =>
  z.object({ id: z.string(), type: z.literal(type), timestamp: Timestamp, data }).meta({ id: name });

/** One event of each type as it is delivered and listed: `data` is the object its `type` names. */
export const TYPED_EVENTS = {
  'sale.created': typedEvent('sale.created', Sale, 'EventSaleCreated'),
  'sale.updated': typedEvent('sale.updated', Sale, 'EventSaleUpdated'),
  'sale.annulled': typedEvent('sale.annulled', Sale, 'EventSaleAnnulled'),
  'stock.changed': typedEvent('stock.changed', StockChangedData, 'EventStockChanged'),
  'return.created': typedEvent('return.created', Return, 'EventReturnCreated'),
  'return.annulled': typedEvent('return.annulled', Return, 'EventReturnAnnulled'),
  'package.imported': typedEvent('package.imported', PackageImportedData, 'EventPackageImported'),
  'export.completed': typedEvent('export.completed', Exportacion, 'EventExportCompleted'),
  'export.failed': typedEvent('export.failed', Exportacion, 'EventExportFailed'),
  'api_key.expiring': typedEvent('api_key.expiring', ApiKeyEventData, 'EventApiKeyExpiring'),
  'api_key.rotated': typedEvent('api_key.rotated', ApiKeyEventData, 'EventApiKeyRotated'),
  'api_key.revoked': typedEvent('api_key.revoked', ApiKeyEventData, 'EventApiKeyRevoked'),
} as const satisfies Record<EventType, z.ZodType>;
export const PingEvent = typedEvent('ping', PingData, 'EventPing');

/** What `GET /events` lists: a union discriminated by `type`. */
export const FeedEvent = z
  .discriminatedUnion('type', [
    TYPED_EVENTS['sale.created'],
    TYPED_EVENTS['sale.updated'],
    TYPED_EVENTS['sale.annulled'],
    TYPED_EVENTS['stock.changed'],
    TYPED_EVENTS['return.created'],
    TYPED_EVENTS['return.annulled'],
    TYPED_EVENTS['package.imported'],
    TYPED_EVENTS['export.completed'],
    TYPED_EVENTS['export.failed'],
    TYPED_EVENTS['api_key.expiring'],
    TYPED_EVENTS['api_key.rotated'],
    TYPED_EVENTS['api_key.revoked'],
  ])
  .meta({ id: 'PartnerEvent' });
/** What a subscription's URL receives: the feed's events and its own `ping`. */
export const DeliveredEvent = z.discriminatedUnion('type', [...FeedEvent.options, PingEvent]).meta({ id: 'DeliveredEvent' });

export const SubscriptionIdParam = IdParam;

export const ReplayBody = z.strictObject({
  desde: z.iso.datetime({ offset: true, message: 'Debe ser una fecha y hora ISO 8601 (por ejemplo 2026-01-31T12:00:00Z)' }),
});

export const EventsQuery = z.strictObject({
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
      .pipe(
        z
          .array(z.union([z.literal('*'), EventTypeName], { message: EVENT_TYPE_MESSAGE }))
          .min(1, 'Debe indicar al menos un tipo de evento'),
      )
      // `*` means every type, as in a subscription: no filter.
      .transform((types): EventType[] | undefined => (types.includes('*') ? undefined : (types as EventType[]))),
    {
      type: 'string',
      pattern: `^(\\*|${EVENT_TYPE_PATTERN})(,(\\*|${EVENT_TYPE_PATTERN}))*$`,
      description: `Tipos de evento separados por comas: ${EVENT_TYPES.join(', ')}; \`*\` (o no enviarlo) son todos.`,
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
  /** Changes url, events, descripcion or enable; the URL is checked like at creation. */
  'subscriptions.subscription.update': {
    tenant: true,
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
    request: z.object({
      id: z.number().int().positive(),
      url: z.string().optional(),
      events: z.array(z.string()).optional(),
      descripcion: z.string().nullable().optional(),
      enable: z.union([z.literal(0), z.literal(1)]).optional(),
    }),
    reply: Subscription,
  },
  /** A new secret; the previous one still signs every delivery for `SECRET_OVERLAP_HOURS`. */
  'subscriptions.subscription.rotate': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: SecretRotated,
  },
  /** Records a `ping` event owed to this subscription only. */
  'subscriptions.subscription.ping': {
    tenant: true,
    errors: ['NOT_FOUND', 'BUSINESS_RULE'],
    request: z.object({ id: z.number().int().positive() }),
    reply: TestQueued,
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
