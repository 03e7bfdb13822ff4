import { z } from 'zod';
import {
  DeliveryAttempt,
  EmptyBody,
  SECRET_OVERLAP_HOURS,
  SecretRotated,
  SubscriptionUpdateBody,
  TestQueued,
  EVENT_TYPES,
  EventsPagination,
  EventsQuery,
  Meta,
  PaginationQuery,
  FeedEvent,
  ReplayBody,
  Subscription,
  SubscriptionCreateBody,
  SubscriptionCreated,
  SubscriptionIdParam,
  subscriptionsSubjects,
} from '@erp/contracts';
import { defineRoute } from '../route';

const SIGNING = [
  'Cada entrega es un `POST` a la URL con el evento como cuerpo JSON (`id`, `type`, `timestamp`, `data`) y las cabeceras de la especificación Standard Webhooks:',
  '`webhook-id` (el id del evento, el mismo en cada reintento y reenvío), `webhook-timestamp` (segundos Unix del envío) y',
  '`webhook-signature`: `v1,` + base64 del HMAC-SHA256 de `<webhook-id>.<webhook-timestamp>.<cuerpo>` con el secreto (los bytes en base64 tras `whsec_`).',
  'Cualquier biblioteca de Standard Webhooks la verifica. Una respuesta 2xx en 10 s es éxito; cualquier otra cosa se reintenta con espera creciente',
  '(el primer reintento en segundos) durante 3 días, en orden por recurso; después la suscripción queda con `enable` 0 y `motivo_deshabilitada`.',
].join('\n');

export const eventsRoutes = [
  defineRoute({
    method: 'post',
    path: '/event-subscriptions',
    summary: 'Suscribe una URL a los eventos de la empresa; responde el secreto de firma, que solo se muestra aquí',
    description: [
      `Tipos: ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')} o \`*\` (todos). Máximo 20 suscripciones por empresa.`,
      'La URL debe ser https y no puede apuntar a direcciones privadas ni locales; no se siguen redirecciones.',
      '',
      SIGNING,
    ].join('\n'),
    body: SubscriptionCreateBody,
    response: { kind: 'single', schema: SubscriptionCreated, statuses: { 201: 'Suscripción creada' } },
    handle: async ({ body }, { bus, ctx }) => {
      const suscripcion = await bus.request(subscriptionsSubjects, 'subscriptions.subscription.create', body, ctx);
      return { status: 201, data: suscripcion, location: `/event-subscriptions/${suscripcion.id}` };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/event-subscriptions',
    summary: 'Las suscripciones de la empresa (sin secreto)',
    query: PaginationQuery,
    response: { kind: 'list', schema: Subscription },
    handle: async ({ query }, { bus, ctx }) => {
      const page = await bus.request(subscriptionsSubjects, 'subscriptions.subscription.list', query, ctx);
      return { data: page.items, pagination: page.pagination, filters_applied: page.filters_applied };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/event-subscriptions/:id',
    summary: 'Una suscripción (sin secreto)',
    params: SubscriptionIdParam,
    response: { kind: 'single', schema: Subscription },
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.request(subscriptionsSubjects, 'subscriptions.subscription.get', params, ctx),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/event-subscriptions/:id',
    summary: 'Cambia la URL, los tipos, la descripción o el estado de una suscripción',
    description: [
      'Solo cambian los campos enviados; un campo desconocido se rechaza con 422 nombrándolo.',
      '- `enable: 1` la vuelve a habilitar (también la que la ventana de reintentos deshabilitó): lo que aún se le debe se entrega desde ya, en orden por recurso, con una ventana de reintentos nueva.',
      '- `enable: 0` la deshabilita (`motivo_deshabilitada`: «Deshabilitada por la empresa»): no recibe nada ni se le encolan eventos nuevos hasta habilitarla.',
      '- Una URL nueva se comprueba como al crearla.',
    ].join('\n'),
    params: SubscriptionIdParam,
    body: SubscriptionUpdateBody,
    response: { kind: 'single', schema: Subscription },
    handle: async ({ params, body }, { bus, ctx }) => ({
      data: await bus.request(subscriptionsSubjects, 'subscriptions.subscription.update', { id: params.id, ...body }, ctx),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/event-subscriptions/:id/rotate-secret',
    summary: 'Da a la suscripción un secreto nuevo (se muestra solo aquí); el anterior sigue firmando durante 24 h',
    description: [
      `Sin cuerpo (o \`{}\`). Durante ${SECRET_OVERLAP_HOURS} h (hasta \`secreto_anterior_hasta\`) cada entrega lleva dos firmas en \`webhook-signature\`,`,
      'separadas por un espacio (`v1,<con el nuevo> v1,<con el anterior>`), como permite Standard Webhooks: un receptor que tenga',
      'cualquiera de los dos secretos la verifica, así que puede cambiar el suyo en cualquier momento de ese plazo.',
    ].join('\n'),
    params: SubscriptionIdParam,
    body: EmptyBody,
    response: { kind: 'single', schema: SecretRotated },
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.request(subscriptionsSubjects, 'subscriptions.subscription.rotate', { id: params.id }, ctx),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/event-subscriptions/:id/test',
    summary: 'Envía un evento `ping` a la suscripción por el camino normal de las entregas',
    description: [
      'Sin cuerpo (o `{}`). El evento `ping` (`data`: `id_suscripcion`, `mensaje`) se firma, se reintenta y aparece en',
      '`/event-subscriptions/{id}/deliveries` como cualquier otro, pero no va a las demás suscripciones ni al feed `/events`.',
      'Sale antes que lo que la suscripción tenga pendiente. Una suscripción deshabilitada responde 422.',
    ].join('\n'),
    params: SubscriptionIdParam,
    body: EmptyBody,
    response: { kind: 'single', schema: TestQueued, statuses: { 202: 'Evento de prueba encolado' } },
    handle: async ({ params }, { bus, ctx }) => ({
      status: 202,
      data: await bus.request(subscriptionsSubjects, 'subscriptions.subscription.ping', { id: params.id }, ctx),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/event-subscriptions/:id',
    summary: 'Elimina una suscripción: no se le entrega nada más',
    params: SubscriptionIdParam,
    response: { kind: 'single', schema: Subscription },
    handle: async ({ params }, { bus, ctx }) => ({
      data: await bus.request(subscriptionsSubjects, 'subscriptions.subscription.delete', params, ctx),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/event-subscriptions/:id/deliveries',
    summary: 'Los intentos de entrega de una suscripción, del más reciente al más antiguo',
    params: SubscriptionIdParam,
    query: PaginationQuery,
    response: { kind: 'list', schema: DeliveryAttempt },
    handle: async ({ params, query }, { bus, ctx }) => {
      const page = await bus.request(subscriptionsSubjects, 'subscriptions.delivery.list', { id: params.id, ...query }, ctx);
      return { data: page.items, pagination: page.pagination, filters_applied: page.filters_applied };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/event-subscriptions/:id/replay',
    summary: 'Vuelve a entregar los eventos desde una fecha y hora (con los mismos ids)',
    description: 'Los eventos se conservan 30 días. `encolados` es cuántos se entregarán de nuevo, en orden por recurso.',
    params: SubscriptionIdParam,
    body: ReplayBody,
    response: { kind: 'single', schema: z.object({ encolados: z.number().int() }), statuses: { 202: 'Reenvío encolado' } },
    handle: async ({ params, body }, { bus, ctx }) => ({
      status: 202,
      data: await bus.request(subscriptionsSubjects, 'subscriptions.subscription.replay', { id: params.id, desde: body.desde }, ctx),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/events',
    summary: 'Los eventos de la empresa, del más antiguo al más reciente, para quien no puede recibir webhooks',
    description: [
      '- `after`: el id del último evento recibido (`pagination.next_after`); sin él, desde el más antiguo conservado (30 días).',
      '- `types`: tipos separados por comas.',
      '- La página nunca salta ni repite un evento aunque se registren otros mientras tanto.',
    ].join('\n'),
    query: EventsQuery,
    response: {
      kind: 'raw',
      schema: z.object({ success: z.literal(true), data: z.array(FeedEvent), pagination: EventsPagination, meta: Meta }),
    },
    handle: async ({ query }, { bus, ctx }) => {
      const page = await bus.request(subscriptionsSubjects, 'subscriptions.event.list', query, ctx);
      const filters = { ...(query.after ? { after: query.after } : {}), ...(query.types ? { types: query.types } : {}) };
      return {
        raw: {
          success: true,
          data: page.items,
          pagination: page.pagination,
          meta: { empresa: ctx.empresa.nombre, timestamp: new Date().toISOString(), filters_applied: filters },
        },
      };
    },
  }),
];
